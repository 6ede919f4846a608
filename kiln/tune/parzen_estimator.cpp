#include "kiln/tune/parzen_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::tune {
namespace {

double log_normal_mass(double low, double high, double centre, double width) {
  double a = std::erf((low - centre) / (width * M_SQRT2));
  double b = std::erf((high - centre) / (width * M_SQRT2));
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
  double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double w : weights) log_weights_.push_back(std::log(w / total));
  spread_ = prior_weight / double(n + 1);
  bandwidths_.assign(centres_.size(), std::vector<double>(d, 0));
  for (size_t j = 0; j < d; ++j) {
    const Distribution& dist = *group_[j]->distribution;
    if (dist.choices()) continue;
    double range = dist.high() - dist.low();
    double narrowest = range / std::min(100.0, double(n + 2));
    std::vector<double> widths = neighbour_bandwidths(j);
    for (size_t k = 0; k < centres_.size(); ++k)
      bandwidths_[k][j] = std::clamp(widths[k], narrowest, range);
    bandwidths_.back()[j] = range;  // the prior stays broad
  }
}

std::vector<double> ParzenEstimator::neighbour_bandwidths(size_t j) const {
  const Distribution& d = *group_[j]->distribution;
  std::vector<size_t> order(centres_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return centres_[a][j] < centres_[b][j]; });
  std::vector<double> widths(centres_.size(), d.high() - d.low());
  size_t m = order.size();
  for (size_t i = 0; i < m; ++i) {
    double here = centres_[order[i]][j];
    double left = i > 0 ? centres_[order[i - 1]][j] : d.low();
    double right = i + 1 < m ? centres_[order[i + 1]][j] : d.high();
    // The outermost centres look inwards only: a range's end is no observation.
    if (m >= 2 && i == 0) left = here - (right - here);
    if (m >= 2 && i + 1 == m) right = here + (here - left);
    widths[order[i]] = std::max(here - left, right - here);
  }
  return widths;
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
      double k = double(d.choices());
      bool observed = !prior && random.uniform() < (1 + spread_) / (1 + k * spread_);
      if (observed) {
        point.push_back(centres_[kernel][j]);
      } else if (prior) {
        point.push_back(double(random.below(d.choices())));
      } else {  // one of the others, evenly
        int64_t other = random.below(d.choices() - 1);
        point.push_back(double(other >= std::lround(centres_[kernel][j]) ? other + 1 : other));
      }
      continue;
    }
    double width = bandwidths_[kernel][j], x = d.low();
    int tries = 0;
    do x = centres_[kernel][j] + width * random.normal();
    while ((x < d.low() || x > d.high()) && ++tries < 64);
    point.push_back(tries < 64 ? x : random.uniform(d.low(), d.high()));
  }
  return point;
}

double ParzenEstimator::kernel_log_score(size_t kernel, const std::vector<double>& point) const {
  bool prior = kernel + 1 == centres_.size();
  double sum = 0;
  for (size_t j = 0; j < group_.size(); ++j) {
    const Distribution& d = *group_[j]->distribution;
    if (d.choices()) {
      double k = double(d.choices());
      bool same = std::lround(point[j]) == std::lround(centres_[kernel][j]);
      sum += prior ? -std::log(k) : std::log(((same ? 1 : 0) + spread_) / (1 + k * spread_));
      continue;
    }
    double width = bandwidths_[kernel][j];
    double z = (point[j] - centres_[kernel][j]) / width;
    // Not divided by the width: see the header.
    sum += -0.5 * z * z - 0.5 * std::log(2 * M_PI) -
           log_normal_mass(d.low(), d.high(), centres_[kernel][j], width);
  }
  return sum;
}

double ParzenEstimator::log_score(const std::vector<double>& point) const {
  std::vector<double> terms;
  for (size_t k = 0; k < centres_.size(); ++k)
    terms.push_back(log_weights_[k] + kernel_log_score(k, point));
  return log_sum_exp(terms);
}

}  // namespace kiln::tune
