// flatten: one example becomes a vector.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Flatten : public Layer {
 public:
  explicit Flatten(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::Flatten()), {element_count(input)}};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "flatten", Flatten, NoOptions,
              "Flattens each example to [features], keeping the batch dimension.");

}  // namespace kiln::models
