// cross_entropy: softmax cross-entropy between logits and class indices.

#include "kiln/losses/loss.h"

namespace kiln::losses {
namespace {

class CrossEntropy : public Loss {
 public:
  explicit CrossEntropy(const NoOptions&) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1,
               "cross_entropy expects logits [batch, classes] and class indices [batch], got "
               "logits of rank {} and targets of rank {}",
               output.dim(), target.dim());
    return torch::nn::functional::cross_entropy(output, target);
  }
};

}  // namespace

KILN_REGISTER(loss_registry, "cross_entropy", CrossEntropy, NoOptions,
              "Softmax cross-entropy of logits [batch, classes] against class indices [batch].");

}  // namespace kiln::losses
