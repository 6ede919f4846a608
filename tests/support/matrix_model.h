#pragma once
// x @ weight as a kiln model: the smallest model whose loss and gradient PyTorch can be asked
// for by hand (the loops' golden tests); and the objective those tests train it on.

#include <torch/torch.h>

#include "kiln/engine/objective.h"
#include "kiln/models/model.h"
#include "tests/support/components.h"

namespace kiln::testing {

class MatrixModel : public models::Model {
 public:
  explicit MatrixModel(const torch::Tensor& weight)
      : weight_(register_parameter("weight", weight.clone())) {}
  torch::Tensor forward(const torch::Tensor& input) override { return input.matmul(weight_); }
  models::Shape output_shape() const override { return {weight_.size(1)}; }
  /// Puts `weight` in place of the current one (no gradient is kept).
  void set(const torch::Tensor& weight) {
    torch::NoGradGuard no_grad;
    weight_.copy_(weight);
  }
  torch::Tensor weight_;
};

/// The config's default loss, cross_entropy, as a single-output model's objective.
inline engine::Objective cross_entropy_objective() {
  std::vector<engine::Objective::Head> heads;
  heads.push_back({"",
                   losses::loss_registry().create(read_spec("loss", "cross_entropy")),
                   1.0,
                   {},
                   "target",
                   "loss"});
  return engine::Objective(std::move(heads));
}

}  // namespace kiln::testing
