// random_erasing: with probability p, fills one random rectangle of each image with a constant
// (Zhong et al., "Random Erasing Data Augmentation", 2017): its area a random fraction of the
// image in `scale`, its aspect ratio log-uniform in `ratio`.

#include <algorithm>
#include <cmath>

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct RandomErasingOptions {
  double p = 0.5;
  std::vector<double> scale = {0.02, 0.33};
  std::vector<double> ratio = {0.3, 3.3};
  double value = 0.0;
  void describe(Schema& s) {
    s.field("p", p, "Probability of erasing a rectangle in an image.").in_range(0, 1);
    s.field("scale", scale, "[min, max] area of the rectangle, as a fraction of the image.")
        .check([](const auto& v) { return v.size() == 2 && 0 < v[0] && v[0] <= v[1] && v[1] <= 1; },
               "[min, max] with 0 < min <= max <= 1");
    s.field("ratio", ratio, "[min, max] aspect ratio (height / width) of the rectangle.")
        .check([](const auto& v) { return v.size() == 2 && 0 < v[0] && v[0] <= v[1]; },
               "[min, max] with 0 < min <= max");
    s.field("value", value, "The value written into the rectangle.");
  }
};

class RandomErasing : public Transform {
 public:
  explicit RandomErasing(const RandomErasingOptions& o) : o_(o) {}

  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    require_images(batch, "random_erasing");
    int64_t count = batch.size(0), height = batch.size(2), width = batch.size(3);
    // Every draw is made for every image, erased or not, so the numbers an image gets do not
    // depend on the images before it.
    auto erase = torch::rand({count}, rng) < o_.p;
    auto area = torch::empty({count}, torch::kFloat64).uniform_(o_.scale[0], o_.scale[1], rng);
    auto log_ratio = torch::empty({count}, torch::kFloat64)
                         .uniform_(std::log(o_.ratio[0]), std::log(o_.ratio[1]), rng);
    auto place = torch::rand({count, 2}, rng, torch::kFloat64);
    // Each image's rectangle, rows [top, bottom) and columns [left, right); empty when kept.
    torch::Tensor bounds = torch::zeros({4, count, 1}, torch::kInt64);
    auto erase_at = erase.accessor<bool, 1>();
    auto area_at = area.accessor<double, 1>(), log_ratio_at = log_ratio.accessor<double, 1>();
    auto place_at = place.accessor<double, 2>();
    auto bound = bounds.accessor<int64_t, 3>();
    for (int64_t i = 0; i < count; ++i) {
      if (!erase_at[i]) continue;
      double pixels = area_at[i] * static_cast<double>(height * width);
      double aspect = std::exp(log_ratio_at[i]);
      int64_t h = clamp_size(std::sqrt(pixels * aspect), height);
      int64_t w = clamp_size(std::sqrt(pixels / aspect), width);
      bound[0][i][0] = static_cast<int64_t>(place_at[i][0] * static_cast<double>(height - h + 1));
      bound[1][i][0] = bound[0][i][0] + h;
      bound[2][i][0] = static_cast<int64_t>(place_at[i][1] * static_cast<double>(width - w + 1));
      bound[3][i][0] = bound[2][i][0] + w;
    }
    // One mask for the whole batch, on its device: a few operations, not a fill per image.
    bounds = on_device_of(bounds, batch);
    auto index = torch::TensorOptions().dtype(torch::kInt64).device(batch.device());
    torch::Tensor rows = torch::arange(height, index), columns = torch::arange(width, index);
    torch::Tensor in_rows = (rows >= bounds[0]) & (rows < bounds[1]);           // [B, H]
    torch::Tensor in_columns = (columns >= bounds[2]) & (columns < bounds[3]);  // [B, W]
    torch::Tensor mask =
        in_rows.view({count, 1, height, 1}) & in_columns.view({count, 1, 1, width});
    return batch.masked_fill(mask, o_.value);
  }

 private:
  static int64_t clamp_size(double size, int64_t limit) {
    return std::clamp<int64_t>(std::llround(size), 1, limit);
  }

  RandomErasingOptions o_;
};

}  // namespace

KILN_REGISTER(transform_registry, "random_erasing", RandomErasing, RandomErasingOptions,
              "With probability p, fills a random rectangle of each image with a constant.");

}  // namespace kiln::data
