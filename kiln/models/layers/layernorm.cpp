// layernorm: normalises each example over its last `dims` dimensions, with a learned scale and
// shift per element.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct LayerNormOptions {
  int64_t dims = 1;
  double eps = 1e-5;
  bool affine = true;
  void describe(Schema& s) {
    s.field("dims", dims, "How many trailing dimensions of the example to normalise over.").min(1);
    s.field("eps", eps, "Added to the variance for numerical stability.").min(0);
    s.field("affine", affine, "Learn a scale and a shift per normalised element.");
  }
};

class LayerNorm : public Layer {
 public:
  explicit LayerNorm(const LayerNormOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    auto rank = static_cast<int64_t>(input.size());
    KILN_CHECK(o_.dims <= rank, "layernorm over {} dimensions, but inputs {} have {}", o_.dims,
               shape_text(input), rank);
    std::vector<int64_t> normalized(input.end() - o_.dims, input.end());
    auto options =
        torch::nn::LayerNormOptions(normalized).eps(o_.eps).elementwise_affine(o_.affine);
    return {torch::nn::AnyModule(torch::nn::LayerNorm(options)), input};
  }

 private:
  LayerNormOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "layernorm", LayerNorm, LayerNormOptions,
              "Layer normalisation over the last `dims` dimensions of each example.");

}  // namespace kiln::models
