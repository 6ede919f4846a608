// global_avgpool: the mean of each channel over all positions, [C, ...] -> [C] (the head of
// ResNet-style networks, in place of flatten).

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

class GlobalAvgPool : public Layer {
 public:
  explicit GlobalAvgPool(const NoOptions&) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() >= 2, "global_avgpool expects inputs [channels, positions...], got {}",
               shape_text(input));
    std::vector<int64_t> positions;
    for (int64_t d = 2; d <= static_cast<int64_t>(input.size()); ++d) positions.push_back(d);
    auto mean = [positions](const torch::Tensor& x) { return x.mean(positions); };
    return {torch::nn::AnyModule(torch::nn::Functional(mean)), {input[0]}};
  }
};

}  // namespace

KILN_REGISTER(layer_registry, "global_avgpool", GlobalAvgPool, NoOptions,
              "Mean of each channel over all its positions: [C, ...] -> [C].");

}  // namespace kiln::models
