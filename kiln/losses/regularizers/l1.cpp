// l1: weight x the sum of the absolute values of the chosen parameters (lasso): pushes small
// weights to exactly zero, for sparse models.

#include "kiln/losses/regularizer.h"

namespace kiln::losses {
namespace {

class L1 : public Regularizer {
 public:
  explicit L1(const RegularizerOptions& options) : Regularizer(options) {}
  torch::Tensor penalty(const torch::Tensor& parameter) const override {
    return parameter.abs().sum();
  }
};

}  // namespace

KILN_REGISTER(regularizer_registry, "l1", L1, RegularizerOptions,
              "weight x sum |p| over the chosen parameters (sparse weights).");

}  // namespace kiln::losses
