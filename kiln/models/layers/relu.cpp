// relu: max(x, 0).

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Relu : public Layer {
 public:
  explicit Relu(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::ReLU()), input};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "relu", Relu, NoOptions, "Rectified linear unit: max(x, 0).");

}  // namespace kiln::models
