// linear: a fully connected layer over flat inputs.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct LinearOptions {
  int64_t out = 1;
  bool bias = true;
  void describe(Schema& s) {
    s.field("out", out, "Output features.").min(1).require();
    s.field("bias", bias, "Learn an additive bias.");
  }
};

class Linear : public Layer {
 public:
  explicit Linear(const LinearOptions& options) : options_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 1,
               "linear expects flat inputs [features], got {}; put a flatten layer before it",
               shape_text(input));
    auto module =
        torch::nn::Linear(torch::nn::LinearOptions(input[0], options_.out).bias(options_.bias));
    return {torch::nn::AnyModule(module), {options_.out}};
  }

 private:
  LinearOptions options_;
};

}  // namespace

KILN_REGISTER(layer_registry, "linear", Linear, LinearOptions,
              "Fully connected layer: y = x W^T + b over [features] inputs.");

}  // namespace kiln::models
