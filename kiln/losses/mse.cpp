// mse: mean squared error between outputs and targets of the same shape (regression and
// reconstruction).

#include "kiln/losses/loss.h"
#include "kiln/losses/same_shape.h"

namespace kiln::losses {
namespace {

class MeanSquaredError : public Loss {
 public:
  explicit MeanSquaredError(const NoOptions&) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    return torch::mse_loss(output, same_shape_target("mse", output, target));
  }
};

}  // namespace

KILN_REGISTER(loss_registry, "mse", MeanSquaredError, NoOptions,
              "Mean squared error between outputs and float targets of the same shape.");

}  // namespace kiln::losses
