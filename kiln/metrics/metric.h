#pragma once
// Metrics accumulate sufficient statistics (sums) over batches, so a value over a whole evaluation
// set is exact whatever the batch size, and ranks can sum their statistics before computing it.
// Thread-safety: one metric object per evaluation loop.

#include <torch/torch.h>

#include <vector>

#include "kiln/core/registry.h"

namespace kiln::metrics {

class Metric {
 public:
  virtual ~Metric() = default;
  virtual void reset() = 0;
  virtual void update(const torch::Tensor& output, const torch::Tensor& target) = 0;
  /// The statistics accumulated so far (e.g. {correct, total}).
  virtual std::vector<double> sums() const = 0;
  /// The metric computed from `sums()`.
  virtual double value() const = 0;
};

using MetricRegistry = Registry<Metric>;
MetricRegistry& metric_registry();

}  // namespace kiln::metrics
