#pragma once
// The Parzen estimator of the TPE sampler: a mixture over a group of parameters' search
// coordinates of one kernel per observed trial plus a prior kernel, each a product over the
// parameters:
// - for a number, a normal truncated to the range. An observed kernel's bandwidth along each
//   parameter is the larger gap to its neighbouring centres there (the prior's centre counts;
//   the outermost centres look inwards only), kept within [range / min(100, n + 2), range]; the
//   prior sits at the middle with the whole range as its bandwidth;
// - for a choice, a categorical: an observed kernel puts weight 1 on its value plus
//   prior_weight / (n + 1) on every value, normalised; the prior's is uniform.
// Points are drawn from the mixture. They are scored by the mixture with each kernel weighted in
// proportion to its bandwidth as well (its density is not divided by it, as Optuna 3.1 scores):
// an isolated trial's wide kernel counts as much as a cluster's narrow ones, which keeps TPE
// exploring; on the test functions of benchmarks/tune.sh it finds better values than the
// normalised density, and better than a bandwidth shared by the group (Scott's rule).
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
  /// The log of the mixture's score at `point` (see above); what TPE compares.
  double log_score(const std::vector<double>& point) const;

 private:
  double kernel_log_score(size_t kernel, const std::vector<double>& point) const;
  // The larger gap of each centre to its neighbours along parameter `j`.
  std::vector<double> neighbour_bandwidths(size_t j) const;

  std::vector<const Parameter*> group_;
  std::vector<std::vector<double>> centres_;     // the observations, then the prior's centre
  std::vector<double> log_weights_;              // normalised, the prior's last
  std::vector<std::vector<double>> bandwidths_;  // per kernel, per parameter (numbers)
  double spread_ = 0;  // a choice's weight on every value, the observed one's being 1 + spread_
};

}  // namespace kiln::tune
