// random_translate: shifts each image by up to `max` pixels in each direction, filling with zeros.

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct RandomTranslateOptions {
  int64_t max = 2;
  void describe(Schema& s) { s.field("max", max, "Largest shift in pixels, per axis.").min(0); }
};

class RandomTranslate : public Transform {
 public:
  explicit RandomTranslate(const RandomTranslateOptions& o) : max_(o.max) {}
  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    require_images(batch, "random_translate");
    // A shift of d is a window at offset max - d of the image padded by max.
    return crop_each(pad_images(batch, max_), batch.size(2), batch.size(3),
                     random_offsets(batch.size(0), 2 * max_, rng),
                     random_offsets(batch.size(0), 2 * max_, rng));
  }

 private:
  int64_t max_;
};

}  // namespace

KILN_REGISTER(transform_registry, "random_translate", RandomTranslate, RandomTranslateOptions,
              "Shifts each image by up to max pixels per axis, filling with zeros.");

}  // namespace kiln::data
