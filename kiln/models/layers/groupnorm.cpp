// groupnorm: normalises each example over groups of channels (Wu and He, 2018), with a learned
// scale and shift per channel; independent of the batch size.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct GroupNormOptions {
  int64_t groups = 0;
  double eps = 1e-5;
  bool affine = true;
  void describe(Schema& s) {
    s.field("groups", groups, "Number of channel groups; must divide the channels.")
        .min(1)
        .require();
    s.field("eps", eps, "Added to the variance for numerical stability.").min(0);
    s.field("affine", affine, "Learn a scale and a shift per channel.");
  }
};

class GroupNorm : public Layer {
 public:
  explicit GroupNorm(const GroupNormOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() >= 2, "groupnorm expects inputs [channels, ...], got {}",
               shape_text(input));
    KILN_CHECK(input[0] % o_.groups == 0, "groupnorm: {} groups do not divide {} channels",
               o_.groups, input[0]);
    auto options = torch::nn::GroupNormOptions(o_.groups, input[0]).eps(o_.eps).affine(o_.affine);
    return {torch::nn::AnyModule(torch::nn::GroupNorm(options)), input};
  }

 private:
  GroupNormOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "groupnorm", GroupNorm, GroupNormOptions,
              "Group normalisation: channels in `groups` groups, each normalised per example.");

}  // namespace kiln::models
