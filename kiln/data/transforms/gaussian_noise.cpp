// gaussian_noise: adds independent N(0, std^2) noise to every value.

#include "kiln/data/transform.h"
#include "kiln/data/transforms/image_batch.h"

namespace kiln::data {
namespace {

struct GaussianNoiseOptions {
  double std = 0.1;
  void describe(Schema& s) { s.field("std", std, "Standard deviation of the noise.").min(0); }
};

class GaussianNoise : public Transform {
 public:
  explicit GaussianNoise(const GaussianNoiseOptions& o) : std_(o.std) {}
  torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const override {
    KILN_CHECK(batch.is_floating_point(), "gaussian_noise needs floating-point inputs; add a cast");
    return batch + on_device_of(torch::randn(batch.sizes(), rng), batch).to(batch.options()) * std_;
  }

 private:
  double std_;
};

}  // namespace

KILN_REGISTER(transform_registry, "gaussian_noise", GaussianNoise, GaussianNoiseOptions,
              "Adds Gaussian noise of the given standard deviation to every value.");

}  // namespace kiln::data
