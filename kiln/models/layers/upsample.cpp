// upsample: enlarges [C, L] or [C, H, W] inputs by an integer factor per spatial dimension.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

// How upsample fills the new positions: copies, or linear interpolation.
enum class UpsampleMode { kNearest, kLinear };
EnumNameList<UpsampleMode> enum_names(UpsampleMode) {
  return {{UpsampleMode::kNearest, "nearest"}, {UpsampleMode::kLinear, "linear"}};
}

struct UpsampleOptions {
  int64_t scale = 2;
  UpsampleMode mode = UpsampleMode::kNearest;
  void describe(Schema& s) {
    s.field("scale", scale, "Factor applied to every spatial size.").min(1);
    s.field("mode", mode, "nearest, or linear interpolation (linear in 1-D, bilinear in 2-D).");
  }
};

class Upsample : public Layer {
 public:
  explicit Upsample(const UpsampleOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 2 || input.size() == 3,
               "upsample expects inputs [channels, length] or [channels, height, width], got {}",
               shape_text(input));
    Shape output = input;
    std::vector<double> factors;
    for (size_t d = 1; d < input.size(); ++d) {
      output[d] *= o_.scale;
      factors.push_back(static_cast<double>(o_.scale));
    }
    auto options = torch::nn::UpsampleOptions().scale_factor(factors);
    if (o_.mode == UpsampleMode::kNearest)
      options.mode(torch::kNearest);
    else if (input.size() == 2)
      options.mode(torch::kLinear).align_corners(false);
    else
      options.mode(torch::kBilinear).align_corners(false);
    return {torch::nn::AnyModule(torch::nn::Upsample(options)), output};
  }

 private:
  UpsampleOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "upsample", Upsample, UpsampleOptions,
              "Enlarges every spatial size by `scale` (nearest or linear interpolation).");

}  // namespace kiln::models
