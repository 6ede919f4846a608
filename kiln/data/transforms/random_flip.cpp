// random_flip: mirrors each image with probability p.

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

// Which way random_flip mirrors an image.
enum class FlipAxis { kHorizontal, kVertical };
EnumNameList<FlipAxis> enum_names(FlipAxis) {
  return {{FlipAxis::kHorizontal, "horizontal"}, {FlipAxis::kVertical, "vertical"}};
}

struct RandomFlipOptions {
  FlipAxis axis = FlipAxis::kHorizontal;
  double p = 0.5;
  void describe(Schema& s) {
    s.field("axis", axis, "horizontal (left-right) or vertical (up-down).");
    s.field("p", p, "Probability of flipping an image.").in_range(0, 1);
  }
};

class RandomFlip : public Transform {
 public:
  explicit RandomFlip(const RandomFlipOptions& o) : o_(o) {}
  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    require_images(batch, "random_flip");
    torch::Tensor flip = (torch::rand({batch.size(0)}, rng) < o_.p).view({-1, 1, 1, 1});
    int64_t dim = o_.axis == FlipAxis::kHorizontal ? 3 : 2;
    return torch::where(on_device_of(flip, batch), batch.flip({dim}), batch);
  }

 private:
  RandomFlipOptions o_;
};

}  // namespace

KILN_REGISTER(transform_registry, "random_flip", RandomFlip, RandomFlipOptions,
              "Mirrors each image, left-right or up-down, with probability p.");

}  // namespace kiln::data
