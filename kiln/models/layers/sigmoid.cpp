// sigmoid: 1 / (1 + exp(-x)), elementwise.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Sigmoid : public Layer {
 public:
  explicit Sigmoid(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::Sigmoid()), input};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "sigmoid", Sigmoid, NoOptions,
              "Logistic sigmoid 1 / (1 + exp(-x)), elementwise: outputs in (0, 1).");

}  // namespace kiln::models
