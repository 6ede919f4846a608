#pragma once
// A metric's running sum kept where its values are (on the GPU in training) and read back only
// when the metric is read, at a log line or after a validation: so that adding a batch never
// waits for the device. Double precision, so that counts stay exact.
// Thread-safety: as the metric that holds it.

#include <torch/torch.h>

namespace kiln::metrics {

class DeviceSum {
 public:
  /// Adds `value`, a one-element tensor on any device, without reading it.
  void add(const torch::Tensor& value) {
    // A 0-dim sum on the CPU (a restored one) adds to a device tensor, as a scalar does.
    torch::Tensor added = value.detach().reshape({}).to(torch::kFloat64);
    sum_ = sum_.defined() ? sum_ + added : added;
  }
  /// The sum: one read from the device.
  double value() const { return sum_.defined() ? sum_.item<double>() : 0.0; }
  /// Replaces the sum (a merge of ranks' sums, a restored state).
  void set(double value) { sum_ = torch::tensor(value, torch::kFloat64); }
  void reset() { sum_ = torch::Tensor(); }

 private:
  torch::Tensor sum_;  // undefined: nothing added
};

}  // namespace kiln::metrics
