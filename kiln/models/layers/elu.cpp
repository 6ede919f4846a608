// elu: x for x > 0, alpha * (exp(x) - 1) below.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct EluOptions {
  double alpha = 1.0;
  void describe(Schema& s) { s.field("alpha", alpha, "Value approached as x -> -inf is -alpha."); }
};

class Elu : public Layer {
 public:
  explicit Elu(const EluOptions& options) : alpha_(options.alpha) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::ELU(torch::nn::ELUOptions().alpha(alpha_))), input};
  }

 private:
  double alpha_;
};

}  // namespace

KILN_REGISTER(layer_registry, "elu", Elu, EluOptions,
              "Exponential linear unit: x for x > 0, alpha * (exp(x) - 1) below.");

}  // namespace kiln::models
