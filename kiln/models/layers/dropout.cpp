// dropout: zeroes random elements while training.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct DropoutOptions {
  double p = 0.5;
  void describe(Schema& s) { s.field("p", p, "Probability of zeroing an element.").in_range(0, 1); }
};

class Dropout : public Layer {
 public:
  explicit Dropout(const DropoutOptions& options) : p_(options.p) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::Dropout(torch::nn::DropoutOptions(p_))), input};
  }

 private:
  double p_;
};

}  // namespace

KILN_REGISTER(layer_registry, "dropout", Dropout, DropoutOptions,
              "Zeroes each element with probability p while training, scaling the rest by "
              "1/(1-p); the identity in evaluation.");

}  // namespace kiln::models
