// random_rotation: rotates each image about its centre by an angle uniform in [-degrees, degrees],
// bilinear sampling, zeros outside the source image.

#include <cmath>

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct RandomRotationOptions {
  double degrees = 10;
  void describe(Schema& s) {
    s.field("degrees", degrees, "Largest rotation, either way, in degrees.").in_range(0, 180);
  }
};

class RandomRotation : public Transform {
 public:
  explicit RandomRotation(const RandomRotationOptions& o) : degrees_(o.degrees) {}

  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    require_images(batch, "random_rotation");
    KILN_CHECK(batch.is_floating_point(),
               "random_rotation needs floating-point inputs; add a cast");
    auto angle = torch::empty({batch.size(0)}, torch::kFloat64)
                     .uniform_(-degrees_ * M_PI / 180, degrees_ * M_PI / 180, rng);
    if (degrees_ == 0) return batch;
    torch::Tensor theta = rotation_matrices(angle, batch.size(2), batch.size(3));
    namespace F = torch::nn::functional;
    torch::Tensor grid =
        F::affine_grid(on_device_of(theta, batch).to(batch.options()), batch.sizes(), false);
    return F::grid_sample(batch, grid,
                          F::GridSampleFuncOptions()
                              .mode(torch::kBilinear)
                              .padding_mode(torch::kZeros)
                              .align_corners(false));
  }

 private:
  // affine_grid works in coordinates normalised to [-1, 1] per axis; a rotation by `a` in pixel
  // space becomes [[cos, -sin*H/W], [sin*W/H, cos]] there, so non-square images are not sheared.
  static torch::Tensor rotation_matrices(const torch::Tensor& angle, int64_t height,
                                         int64_t width) {
    double h_over_w = static_cast<double>(height) / static_cast<double>(width);
    torch::Tensor c = angle.cos(), s = angle.sin(), zero = torch::zeros_like(angle);
    torch::Tensor row0 = torch::stack({c, -s * h_over_w, zero}, 1);
    torch::Tensor row1 = torch::stack({s / h_over_w, c, zero}, 1);
    return torch::stack({row0, row1}, 1);
  }

  double degrees_;
};

}  // namespace

KILN_REGISTER(transform_registry, "random_rotation", RandomRotation, RandomRotationOptions,
              "Rotates each image by a random angle in [-degrees, degrees], filling with zeros.");

}  // namespace kiln::data
