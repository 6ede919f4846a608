// random_crop: a random window of each image, after zero padding (the classic CIFAR/MNIST
// augmentation: `size: 28, padding: 2`).

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct RandomCropOptions {
  int64_t size = 0;
  int64_t padding = 0;
  void describe(Schema& s) {
    s.field("size", size, "Height and width of the square window.").min(1).require();
    s.field("padding", padding, "Zeros added on every side before cropping.").min(0);
  }
};

class RandomCrop : public Transform {
 public:
  explicit RandomCrop(const RandomCropOptions& o) : o_(o) {}
  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    require_images(batch, "random_crop");
    torch::Tensor padded = pad_images(batch, o_.padding);
    int64_t spare_h = padded.size(2) - o_.size, spare_w = padded.size(3) - o_.size;
    KILN_CHECK(spare_h >= 0 && spare_w >= 0,
               "random_crop: a window of {} does not fit images of {}x{} padded by {}", o_.size,
               batch.size(2), batch.size(3), o_.padding);
    return crop_each(padded, o_.size, o_.size, random_offsets(batch.size(0), spare_h, rng),
                     random_offsets(batch.size(0), spare_w, rng));
  }

 private:
  RandomCropOptions o_;
};

}  // namespace

KILN_REGISTER(transform_registry, "random_crop", RandomCrop, RandomCropOptions,
              "A random size x size window of each image, after zero padding.");

}  // namespace kiln::data
