// resize: scales every image to a fixed height and width. Integer images are resized in float and
// rounded back, so a uint8 pipeline stays uint8.

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

// resize's interpolation.
enum class ResizeMode { kBilinear, kBicubic, kNearest, kArea };
EnumNameList<ResizeMode> enum_names(ResizeMode) {
  return {{ResizeMode::kBilinear, "bilinear"},
          {ResizeMode::kBicubic, "bicubic"},
          {ResizeMode::kNearest, "nearest"},
          {ResizeMode::kArea, "area"}};
}

struct ResizeOptions {
  std::vector<int64_t> size;
  ResizeMode mode = ResizeMode::kBilinear;
  void describe(Schema& s) {
    s.field("size", size, "[height, width], or one number for a square.")
        .check(
            [](const auto& v) {
              return (v.size() == 1 || v.size() == 2) && v[0] >= 1 && v.back() >= 1;
            },
            "one or two sizes >= 1")
        .require();
    s.field("mode", mode, "Interpolation.");
  }
};

class Resize : public Transform {
 public:
  explicit Resize(const ResizeOptions& o) : size_{o.size.front(), o.size.back()}, mode_(o.mode) {}

  torch::Tensor apply(const torch::Tensor& batch, at::Generator&) const override {
    require_images(batch, "resize");
    if (batch.size(2) == size_[0] && batch.size(3) == size_[1]) return batch;
    torch::Tensor input = batch.is_floating_point() ? batch : batch.to(torch::kFloat32);
    torch::Tensor out = torch::nn::functional::interpolate(input, interpolate_options());
    if (batch.is_floating_point()) return out;
    return out.round_().clamp_(min_of(batch), max_of(batch)).to(batch.scalar_type());
  }

 private:
  torch::nn::functional::InterpolateFuncOptions interpolate_options() const {
    auto options = torch::nn::functional::InterpolateFuncOptions().size(size_);
    switch (mode_) {
      case ResizeMode::kBilinear:
        return options.mode(torch::kBilinear).align_corners(false);
      case ResizeMode::kBicubic:
        return options.mode(torch::kBicubic).align_corners(false);
      case ResizeMode::kArea:
        return options.mode(torch::kArea);
      case ResizeMode::kNearest:
        break;
    }
    return options.mode(torch::kNearest);
  }
  // The range of an integer dtype, so bicubic overshoot does not wrap around.
  static double min_of(const torch::Tensor& t) {
    return t.scalar_type() == torch::kUInt8 ? 0 : -1e18;
  }
  static double max_of(const torch::Tensor& t) {
    return t.scalar_type() == torch::kUInt8 ? 255 : 1e18;
  }

  std::vector<int64_t> size_;
  ResizeMode mode_;
};

}  // namespace

KILN_REGISTER(transform_registry, "resize", Resize, ResizeOptions,
              "Scales each image to [height, width] (bilinear, bicubic, nearest or area).");

}  // namespace kiln::data
