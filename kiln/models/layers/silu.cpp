// silu: x * sigmoid(x) (also called swish).

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class Silu : public Layer {
 public:
  explicit Silu(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    return {torch::nn::AnyModule(torch::nn::SiLU()), input};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "silu", Silu, NoOptions,
              "Sigmoid linear unit x * sigmoid(x), also called swish.");

}  // namespace kiln::models
