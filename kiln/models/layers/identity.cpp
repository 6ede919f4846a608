// identity: passes its input through (a placeholder, e.g. for an optional block).

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Identity : public Layer {
 public:
  explicit Identity(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::Identity()), input};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "identity", Identity, NoOptions, "Returns its input unchanged.");

}  // namespace kiln::models
