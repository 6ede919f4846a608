// mse: mean squared error between outputs and targets of the same shape (regression and
// reconstruction).

#include "kiln/losses/loss.h"
#include "kiln/models/layer.h"

namespace kiln::losses {
namespace {

class MeanSquaredError : public Loss {
 public:
  explicit MeanSquaredError(const NoOptions&) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    // torch would broadcast [batch, 1] against [batch] into [batch, batch] and only warn: a
    // silent wrong loss, so shapes must agree exactly (a [batch] target fits a [batch, 1] output).
    torch::Tensor matched = target;
    if (output.dim() == 2 && output.size(1) == 1 && target.dim() == 1)
      matched = target.unsqueeze(1);
    KILN_CHECK(output.sizes() == matched.sizes(),
               "mse expects outputs and targets of the same shape, got outputs {} and targets {}",
               models::shape_text(output.sizes().vec()), models::shape_text(target.sizes().vec()));
    return torch::mse_loss(output, matched.to(output.dtype()));
  }
};

}  // namespace

KILN_REGISTER(loss_registry, "mse", MeanSquaredError, NoOptions,
              "Mean squared error between outputs and float targets of the same shape.");

}  // namespace kiln::losses
