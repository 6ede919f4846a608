// flatten: one example becomes a vector.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Flatten : public Layer {
 public:
  explicit Flatten(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    int64_t features = 1;
    for (int64_t d : input) features *= d;
    return {torch::nn::AnyModule(torch::nn::Flatten()), {features}};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "flatten", Flatten, NoOptions,
              "Flattens each example to [features], keeping the batch dimension.");

}  // namespace kiln::models
