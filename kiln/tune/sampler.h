#pragma once
// Samplers choose each trial's parameters (`tune.sampler`): random, grid, tpe. A sampler is
// seeded, and trial n's draw depends only on the seed, n and the trials it is shown, so a study
// run one trial at a time repeats exactly.
// Torch-free. Thread-safety: sample() is called from one thread.

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "kiln/core/registry.h"
#include "kiln/tune/search_space.h"

namespace kiln::tune {

enum class TrialState { kWaiting, kRunning, kComplete, kPruned, kFailed };

/// What a sampler (and a pruner) sees of a trial.
struct TrialView {
  int64_t number = 0;
  TrialState state = TrialState::kWaiting;
  Assignment assignment;
  /// The value to minimise (the metric, negated when the study maximises it): a complete trial's
  /// final one, a pruned trial's last reported one.
  std::optional<double> loss;
};

/// The random numbers of one draw: a 64-bit generator seeded from (seed, trial number).
class DrawRandom {
 public:
  DrawRandom(uint64_t seed, int64_t trial);
  double uniform();                         // in [0, 1)
  double uniform(double low, double high);  // in [low, high)
  double normal();                          // standard
  int64_t below(int64_t n);                 // in [0, n)

 private:
  std::mt19937_64 engine_;
};

class Sampler {
 public:
  virtual ~Sampler() = default;
  /// Trial `number`'s parameters given the study's other trials; nullopt when the sampler has no
  /// more to give (a grid done).
  virtual std::optional<Assignment> sample(const SearchSpace& space,
                                           const std::vector<TrialView>& trials,
                                           int64_t number) = 0;
};

/// Samplers are built with the study's seed.
using SamplerRegistry = Registry<Sampler, uint64_t>;
SamplerRegistry& sampler_registry();

/// A draw of every parameter the assignment reaches, each uniform over its search coordinate.
Assignment sample_uniformly(const SearchSpace& space, DrawRandom& random);

}  // namespace kiln::tune
