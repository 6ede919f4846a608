// mae: mean absolute error (L1) between outputs and targets of the same shape: regression that
// an outlier pulls less than mse.

#include "kiln/losses/loss.h"
#include "kiln/losses/same_shape.h"

namespace kiln::losses {
namespace {

class MeanAbsoluteError : public Loss {
 public:
  explicit MeanAbsoluteError(const NoOptions&) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    return torch::l1_loss(output, same_shape_target("mae", output, target));
  }
};

}  // namespace

KILN_REGISTER(loss_registry, "mae", MeanAbsoluteError, NoOptions,
              "Mean absolute error (L1) between outputs and float targets of the same shape.");

}  // namespace kiln::losses
