// linear: a fully connected layer over flat inputs, or over each step of a sequence [steps,
// features] (as torch.nn.Linear does). Image-shaped inputs are refused rather than mixed along
// their width, which is nearly always a missing flatten.

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
    KILN_CHECK(input.size() == 1 || input.size() == 2,
               "linear expects flat inputs [features] or sequences [steps, features], got {}; "
               "put a flatten layer before it",
               shape_text(input));
    auto module =
        torch::nn::Linear(torch::nn::LinearOptions(input.back(), options_.out).bias(options_.bias));
    Shape output = input;
    output.back() = options_.out;
    return {torch::nn::AnyModule(module), output};
  }

 private:
  LinearOptions options_;
};

}  // namespace

KILN_REGISTER(
    layer_registry, "linear", Linear, LinearOptions,
    "Fully connected layer: y = x W^T + b over [features], or each step of [steps, features].");

}  // namespace kiln::models
