// tanh: the hyperbolic tangent, elementwise.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Tanh : public Layer {
 public:
  explicit Tanh(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::Tanh()), input};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "tanh", Tanh, NoOptions,
              "Hyperbolic tangent, elementwise: outputs in (-1, 1).");

}  // namespace kiln::models
