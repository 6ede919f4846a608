#pragma once
// Metrics accumulate sufficient statistics (sums) over batches, so a value over a whole evaluation
// set is exact whatever the batch size, and ranks can combine their statistics before computing
// it: element-wise sums for most metrics, a concatenation of examples for roc_auc (summable()).
//
// A metric is tagged `split/NAME` (`val/accuracy`), NAME its tag_name(): the registry name, or
// one that says which options change what it measures (`top_5_accuracy`, `f1_micro`), so the same
// metric twice with different options keeps distinct tags. A metric that is not one number
// (confusion_matrix) reports several named values, each tagged `split/NAME/KEY`
// (`val/confusion_matrix/true_3/pred_5`).
// Thread-safety: one metric object per evaluation loop.

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/core/registry.h"

namespace kiln::metrics {

class Metric {
 public:
  virtual ~Metric() = default;
  virtual void reset() = 0;
  /// Adds a batch. An option that does not fit the outputs is a ConfigError whose path is the
  /// option's, relative to the metric (`k`); any other kiln::Error (shapes, classes out of range)
  /// is reported as a config error at the metric.
  virtual void update(const torch::Tensor& output, const torch::Tensor& target) = 0;
  /// The statistics accumulated so far (e.g. {correct, total}).
  virtual std::vector<double> sums() const = 0;
  /// The metric computed from `sums()`.
  virtual double value() const = 0;

  /// Replaces the statistics with `sums`, as sums() lays them out (e.g. after ranks combined
  /// theirs). The default refuses: a metric that cannot be restored cannot be merged.
  virtual void set_sums(const std::vector<double>& sums);
  /// True when two instances' sums() combine by element-wise addition; false when they must be
  /// concatenated (roc_auc keeps its examples' scores).
  virtual bool summable() const { return true; }
  /// Adds the statistics of `other` (a metric of the same type and options) to these, so that
  /// value() covers the examples of both: halves of a set, or the shards of data-parallel ranks.
  /// Default: element-wise sum of sums(); an instance without statistics takes the other's.
  virtual void merge(const Metric& other);

  /// The NAME of this metric's tags, given the name it is registered under.
  virtual std::string tag_name(const std::string& registered) const { return registered; }
  /// What to report, by key: {"": value()} for a metric that is one number (tagged split/NAME);
  /// a metric of several values gives each a key (tagged split/NAME/KEY).
  virtual std::map<std::string, double> values() const { return {{"", value()}}; }
  /// The keys values() gives, as far as they are known before (or without) computing them.
  virtual std::vector<std::string> value_keys() const { return {""}; }
};

/// `[batch, classes]`-style text of a tensor's shape, for messages.
std::string shape_of(const torch::Tensor& tensor);

using MetricRegistry = Registry<Metric>;
MetricRegistry& metric_registry();

}  // namespace kiln::metrics
