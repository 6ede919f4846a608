#pragma once
// A metric's running sum kept where its values are (on the GPU in training) and read back only
// when the metric is read, at a log line or after a validation: so that adding a batch never
// waits for the device. Double precision, so that counts stay exact.
// Thread-safety: as the metric that holds it.

#include <torch/torch.h>

#include <vector>

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

/// A metric's running counts, a vector summed on the device where the batches are, read back when
/// the metric is read (per-class counts, a confusion matrix's cells).
class DeviceCounts {
 public:
  /// Adds `counts`, a 1-D tensor of size() values (any size before the first), unread.
  void add(const torch::Tensor& counts) {
    torch::Tensor added = counts.detach().to(torch::kFloat64);
    sum_ = sum_.defined() ? sum_ + added : added;
    size_ = added.numel();
  }
  /// How many counts (known on the host); 0 before any add.
  int64_t size() const { return size_; }
  /// The counts: one read from the device.
  std::vector<double> read() const {
    if (!sum_.defined()) return {};
    torch::Tensor here = sum_.to(torch::kCPU).contiguous();
    return {here.data_ptr<double>(), here.data_ptr<double>() + here.numel()};
  }
  /// Replaces the counts (a merge of ranks', a restored state).
  void set(const std::vector<double>& counts) {
    reset();
    if (counts.empty()) return;
    sum_ = torch::tensor(counts, torch::kFloat64);
    size_ = int64_t(counts.size());
  }
  void reset() {
    sum_ = torch::Tensor();
    size_ = 0;
  }

 private:
  torch::Tensor sum_;  // undefined: nothing added
  int64_t size_ = 0;
};

/// What a metric keeps of each batch on the batch's device (scores and labels, a batch's
/// statistics) until the metric is read: then one copy brings all of it to host memory.
class DeviceRows {
 public:
  /// Keeps `rows` (any shape), unread.
  void add(const torch::Tensor& rows) { pending_.push_back(rows.detach().to(torch::kFloat64)); }
  bool empty() const { return pending_.empty(); }
  /// Everything kept since the last take, in host memory, in the order and shapes added.
  std::vector<torch::Tensor> take() {
    std::vector<torch::Tensor> flat, taken;
    for (const torch::Tensor& rows : pending_) flat.push_back(rows.reshape({-1}));
    if (flat.empty()) return taken;
    torch::Tensor here = torch::cat(flat).to(torch::kCPU).contiguous();
    int64_t at = 0;
    for (const torch::Tensor& rows : pending_) {
      taken.push_back(here.narrow(0, at, rows.numel()).view(rows.sizes()));
      at += rows.numel();
    }
    pending_.clear();
    return taken;
  }
  void clear() { pending_.clear(); }

 private:
  std::vector<torch::Tensor> pending_;
};

}  // namespace kiln::metrics
