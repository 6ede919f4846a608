#include "kiln/tune/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::tune {
namespace {

double log_normal_cdf_mass(double low, double high, double centre, double width) {
  double a = std::erf((low - centre) / (width * M_SQRT2)),
         b = std::erf((high - centre) / (width * M_SQRT2));
  return std::log(std::max(0.5 * (b - a), 1e-300));
}

double log_sum_exp(const std::vector<double>& terms) {
  double top = *std::max_element(terms.begin(), terms.end());
  if (!std::isfinite(top)) return top;
  double sum = 0;
  for (double t : terms) sum += std::exp(t - top);
  return top + std::log(sum);
}

}  // namespace

ParzenEstimator::ParzenEstimator(std::vector<const Parameter*> group,
                                 std::vector<std::vector<double>> observations,
                                 std::vector<double> weights, double prior_weight)
    : group_(std::move(group)), centres_(std::move(observations)) {
  size_t n = centres_.size(), d = group_.size();
  std::vector<double> prior;
  for (const Parameter* p : group_)
    prior.push_back(
        p->distribution->choices() ? -1 : 0.5 * (p->distribution->low() + p->distribution->high()));
  centres_.push_back(prior);
  weights.push_back(prior_weight);
  double total = 0;
  for (double w : weights) total += w;
  for (double w : weights) log_weights_.push_back(std::log(w / total));
  // Scott's rule over the group, clipped so that many observations never make a needle.
  double scale = 0.2 * std::pow(double(std::max<size_t>(n, 1)), -1.0 / double(d + 4));
  for (const Parameter* p : group_) {
    double range = p->distribution->high() - p->distribution->low();
    double narrowest = range / std::min(100.0, 1.0 + double(n));
    bandwidths_.push_back(std::clamp(scale * range, narrowest, range));
  }
}

std::vector<double> ParzenEstimator::sample(DrawRandom& random) const {
  double pick = random.uniform(), at = 0;
  size_t kernel = centres_.size() - 1;
  for (size_t k = 0; k < centres_.size(); ++k) {
    at += std::exp(log_weights_[k]);
    if (pick < at) {
      kernel = k;
      break;
    }
  }
  bool prior = kernel + 1 == centres_.size();
  std::vector<double> point;
  for (size_t j = 0; j < group_.size(); ++j) {
    const Distribution& d = *group_[j]->distribution;
    if (d.choices()) {
      // Half the mass on the observed choice, the rest (all of the prior's) spread evenly.
      bool observed = !prior && random.uniform() < 0.5;
      point.push_back(observed ? centres_[kernel][j] : double(random.below(d.choices())));
      continue;
    }
    double width = prior ? d.high() - d.low() : bandwidths_[j], x = d.low();
    int tries = 0;
    do x = centres_[kernel][j] + width * random.normal();
    while ((x < d.low() || x > d.high()) && ++tries < 64);
    point.push_back(tries < 64 ? x : random.uniform(d.low(), d.high()));
  }
  return point;
}

double ParzenEstimator::kernel_log_density(size_t kernel, const std::vector<double>& point) const {
  bool prior = kernel + 1 == centres_.size();
  double sum = 0;
  for (size_t j = 0; j < group_.size(); ++j) {
    const Distribution& d = *group_[j]->distribution;
    if (d.choices()) {
      double k = double(d.choices());
      bool same = !prior && std::lround(point[j]) == std::lround(centres_[kernel][j]);
      sum += std::log(prior ? 1 / k : (same ? 0.5 : 0) + 0.5 / k);
      continue;
    }
    double width = prior ? d.high() - d.low() : bandwidths_[j];
    double z = (point[j] - centres_[kernel][j]) / width;
    sum += -0.5 * z * z - std::log(width * std::sqrt(2 * M_PI)) -
           log_normal_cdf_mass(d.low(), d.high(), centres_[kernel][j], width);
  }
  return sum;
}

double ParzenEstimator::log_density(const std::vector<double>& point) const {
  std::vector<double> terms;
  for (size_t k = 0; k < centres_.size(); ++k)
    terms.push_back(log_weights_[k] + kernel_log_density(k, point));
  return log_sum_exp(terms);
}

}  // namespace kiln::tune
