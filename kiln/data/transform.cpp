#include "kiln/data/transform.h"

#include <ATen/CPUGeneratorImpl.h>

namespace kiln::data {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

torch::Tensor Transform::apply(const torch::Tensor& batch) const {
  at::Generator rng = at::detail::createCPUGenerator(0);
  return apply(batch, rng);
}

TransformRegistry& transform_registry() {
  static TransformRegistry registry("transform",
                                    "Batch transforms: augmentation and preprocessing.");
  return registry;
}

uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t batch) {
  return splitmix64(splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(epoch)) ^
                    static_cast<uint64_t>(batch));
}

at::Generator batch_generator(uint64_t seed, int64_t epoch, int64_t batch) {
  return at::detail::createCPUGenerator(batch_seed(seed, epoch, batch));
}

}  // namespace kiln::data
