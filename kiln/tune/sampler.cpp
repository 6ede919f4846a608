#include "kiln/tune/sampler.h"

#include <cmath>

namespace kiln::tune {

SamplerRegistry& sampler_registry() {
  static SamplerRegistry registry("sampler", "How a study chooses each trial's parameters.");
  return registry;
}

DrawRandom::DrawRandom(uint64_t seed, int64_t trial) {
  // Distinct, well-mixed seeds for neighbouring trials (splitmix64's finaliser).
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + uint64_t(trial) + 1;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  engine_.seed(x ^ (x >> 31));
}

// Made here rather than by <random>'s distributions, whose algorithms differ between standard
// libraries: a study repeats wherever kiln is built.
double DrawRandom::uniform() { return double(engine_() >> 11) * 0x1.0p-53; }

double DrawRandom::uniform(double low, double high) { return low + (high - low) * uniform(); }

double DrawRandom::normal() {
  double u = 1 - uniform(), v = uniform();  // u in (0, 1]
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * v);
}

int64_t DrawRandom::below(int64_t n) {
  return std::min<int64_t>(n - 1, int64_t(uniform() * double(n)));
}

Assignment sample_uniformly(const SearchSpace& space, DrawRandom& random) {
  Assignment out;
  for (const Parameter& p : space.parameters()) {
    if (!space.active(p, out)) continue;
    const Distribution& d = *p.distribution;
    double coordinate =
        d.choices() ? double(random.below(d.choices())) : random.uniform(d.low(), d.high());
    out[p.name] = d.snap(coordinate);
  }
  return out;
}

}  // namespace kiln::tune
