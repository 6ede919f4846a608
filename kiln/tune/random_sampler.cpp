// random: every parameter drawn independently and uniformly over its search coordinate (a
// loguniform's on the log scale).

#include "kiln/tune/sampler.h"

namespace kiln::tune {
namespace {

class RandomSampler : public Sampler {
 public:
  RandomSampler(const NoOptions&, uint64_t seed) : seed_(seed) {}
  std::optional<Assignment> sample(const SearchSpace& space, const std::vector<TrialView>&,
                                   int64_t number) override {
    DrawRandom random(seed_, number);
    return sample_uniformly(space, random);
  }

 private:
  uint64_t seed_;
};

}  // namespace

KILN_REGISTER(sampler_registry, "random", RandomSampler, NoOptions,
              "Each parameter drawn independently and uniformly.");

}  // namespace kiln::tune
