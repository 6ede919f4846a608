// normalize: (x - mean) / std, per channel (dimension 1) or for all values at once.

#include <cmath>
#include <limits>

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct NormalizeOptions {
  std::vector<double> mean = {0.0};
  std::vector<double> std = {1.0};
  void describe(Schema& s) {
    // Applied in float32: a value that float32 holds as infinity (or a std as 0) would make
    // every input NaN or infinite.
    s.field("mean", mean, "Mean to subtract: one value, or one per channel.")
        .check(
            [](const std::vector<double>& v) {
              for (double x : v)
                if (!(std::abs(x) <= std::numeric_limits<float>::max())) return false;
              return !v.empty();
            },
            "with every item a finite float32");
    s.field("std", std, "Standard deviation to divide by: one value, or one per channel.")
        .check(
            [](const std::vector<double>& v) {
              for (double x : v)
                if (!(x >= std::numeric_limits<float>::min() &&
                      x <= std::numeric_limits<float>::max()))
                  return false;
              return !v.empty();
            },
            "with every item > 0 (a normal float32)");
  }
};

class Normalize : public Transform {
 public:
  explicit Normalize(const NormalizeOptions& options)
      : mean_(torch::tensor(options.mean, torch::kFloat32)),
        inverse_std_(1.0 / torch::tensor(options.std, torch::kFloat32)) {}

  torch::Tensor apply(const torch::Tensor& batch, at::Generator&) const override {
    return (batch - per_channel(mean_, batch)) * per_channel(inverse_std_, batch);
  }

 private:
  // One value broadcasts everywhere; C values line up with dimension 1 of [B, C, ...].
  static torch::Tensor per_channel(const torch::Tensor& values, const torch::Tensor& batch) {
    if (values.numel() == 1) return on_device_of(values, batch);
    KILN_CHECK(batch.dim() >= 2 && batch.size(1) == values.numel(),
               "normalize has {} values but the input has {} channels", values.numel(),
               batch.dim() >= 2 ? batch.size(1) : 0);
    std::vector<int64_t> shape(static_cast<size_t>(batch.dim()), 1);
    shape[1] = values.numel();
    return on_device_of(values.view(shape), batch);
  }

  torch::Tensor mean_, inverse_std_;
};

}  // namespace

KILN_REGISTER(transform_registry, "normalize", Normalize, NormalizeOptions,
              "Subtracts a mean and divides by a standard deviation, per channel or overall.");

}  // namespace kiln::data
