// l2: weight x the sum of the squares of the chosen parameters (ridge, as Keras's l2). Its
// gradient is 2 x weight x p: with plain SGD, the same as weight_decay = 2 x weight, but here it
// can cover only some parameters and is logged as a loss.

#include "kiln/losses/regularizer.h"

namespace kiln::losses {
namespace {

class L2 : public Regularizer {
 public:
  explicit L2(const RegularizerOptions& options) : Regularizer(options) {}
  torch::Tensor penalty(const torch::Tensor& parameter) const override {
    return parameter.square().sum();
  }
};

}  // namespace

KILN_REGISTER(regularizer_registry, "l2", L2, RegularizerOptions,
              "weight x sum p^2 over the chosen parameters (small weights).");

}  // namespace kiln::losses
