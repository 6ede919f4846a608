#pragma once
// The Parzen estimator of the TPE sampler: a density over a group of parameters' search
// coordinates made of one kernel per observed trial plus a broad prior kernel. A kernel is a
// product over the parameters: a normal truncated to the range for a number (its bandwidth
// shrinks as observations grow, Scott's rule over the group's dimension), and for a choice a
// categorical that puts half its mass on the observed value and spreads the rest evenly.
// Torch-free. Thread-safety: immutable once built.

#include <vector>

#include "kiln/tune/sampler.h"

namespace kiln::tune {

class ParzenEstimator {
 public:
  /// `observations[i]` holds one coordinate per parameter of `group`; `weights[i]` its weight.
  ParzenEstimator(std::vector<const Parameter*> group,
                  std::vector<std::vector<double>> observations, std::vector<double> weights,
                  double prior_weight);
  /// A point drawn from the density.
  std::vector<double> sample(DrawRandom& random) const;
  /// The log of the density at `point`.
  double log_density(const std::vector<double>& point) const;

 private:
  double kernel_log_density(size_t kernel, const std::vector<double>& point) const;

  std::vector<const Parameter*> group_;
  std::vector<std::vector<double>> centres_;  // the observations, then the prior's centre
  std::vector<double> log_weights_;           // normalised, the prior's last
  std::vector<double> bandwidths_;            // per parameter (numbers; the prior's is the range)
};

}  // namespace kiln::tune
