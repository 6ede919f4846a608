#pragma once
// A histogram of values as TensorBoard's HistogramProto holds it: TensorFlow's default bucket
// limits (edges growing by 10 % from 1e-12 to 1e20 on both sides of 0, then +-DBL_MAX), counts,
// and min, max, sum and sum of squares. Runs of empty buckets are written as one, as TensorFlow
// writes them, so a histogram of a layer's weights takes a few hundred bytes.
// Thread-safety: one thread per object.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::tensorboard {

namespace proto {
class HistogramProto;
}

class Histogram {
 public:
  Histogram();
  void add(double value);
  void add(const float* values, size_t count);

  int64_t count() const { return count_; }
  /// Bucket limits and counts, empty runs collapsed; min/max/sum/sum_squares.
  void write_to(proto::HistogramProto& out) const;

  /// TensorFlow's default limits (the right edge of each bucket), ascending.
  static const std::vector<double>& default_limits();

 private:
  std::vector<double> counts_;
  double min_, max_, sum_ = 0, sum_squares_ = 0;
  int64_t count_ = 0;
};

}  // namespace kiln::tensorboard
