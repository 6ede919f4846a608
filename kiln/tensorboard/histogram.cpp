#include "kiln/tensorboard/histogram.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kiln/tensorboard/proto/summary.pb.h"

namespace kiln::tensorboard {
namespace {

std::vector<double> make_default_limits() {
  std::vector<double> positive;
  for (double edge = 1e-12; edge < 1e20; edge *= 1.1) positive.push_back(edge);
  std::vector<double> limits;
  limits.reserve(positive.size() * 2 + 3);
  limits.push_back(-DBL_MAX);
  for (auto edge = positive.rbegin(); edge != positive.rend(); ++edge) limits.push_back(-*edge);
  limits.push_back(0.0);
  limits.insert(limits.end(), positive.begin(), positive.end());
  limits.push_back(DBL_MAX);
  return limits;
}

}  // namespace

const std::vector<double>& Histogram::default_limits() {
  static const std::vector<double> limits = make_default_limits();
  return limits;
}

Histogram::Histogram() : counts_(default_limits().size(), 0.0), min_(DBL_MAX), max_(-DBL_MAX) {}

void Histogram::add(double value) {
  // NaN belongs to no bucket; TensorFlow's histogram puts it in the last one, which would draw
  // it as a huge value. It is left out, and so is infinity, counted as +-DBL_MAX's bucket.
  if (std::isnan(value)) return;
  const std::vector<double>& limits = default_limits();
  // Bucket i holds (limits[i-1], limits[i]]: the first limit not below the value.
  size_t bucket =
      static_cast<size_t>(std::lower_bound(limits.begin(), limits.end(), value) - limits.begin());
  counts_[std::min(bucket, limits.size() - 1)] += 1;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += value;
  sum_squares_ += value * value;
  count_ += 1;
}

void Histogram::add(const float* values, size_t count) {
  for (size_t i = 0; i < count; ++i) add(static_cast<double>(values[i]));
}

void Histogram::write_to(proto::HistogramProto& out) const {
  out.set_min(count_ ? min_ : 0.0);
  out.set_max(count_ ? max_ : 0.0);
  out.set_num(static_cast<double>(count_));
  out.set_sum(sum_);
  out.set_sum_squares(sum_squares_);
  const std::vector<double>& limits = default_limits();
  for (size_t i = 0; i < counts_.size();) {
    double limit = limits[i], count = counts_[i];
    ++i;
    // An empty bucket extends over the empty ones after it: one (limit, 0) pair for the run.
    if (count == 0)
      while (i < counts_.size() && counts_[i] == 0) limit = limits[i++];
    out.add_bucket_limit(limit);
    out.add_bucket(count);
  }
}

}  // namespace kiln::tensorboard
