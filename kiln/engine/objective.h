#pragma once
// What training minimises and evaluation measures. A model with one output has one unnamed head:
// the config's `loss` and `metrics`, logged as split/loss and split/METRIC. A multi_head model
// has a head per output, each with its own loss, weight, metrics and target: training minimises
// the weighted sum of the head losses (logged as split/loss), and each head is logged as
// split/HEAD/loss and split/HEAD/METRIC.
// Thread-safety: one thread; training and validation each have their own objective, so that a
// validation inside a logging window leaves the training statistics alone.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/distributed/context.h"
#include "kiln/engine/metric_values.h"
#include "kiln/losses/loss.h"
#include "kiln/metrics/metric.h"
#include "kiln/models/model.h"

namespace kiln::engine {

/// A metric with its config name (`accuracy`); the Objective turns that into the metric's
/// tag_name() (`top_5_accuracy`), its tags `val/NAME` or, for a metric of several values,
/// `val/NAME/KEY` (metrics/metric.h).
struct NamedMetric {
  std::string name;
  std::unique_ptr<metrics::Metric> metric;
};

class Objective {
 public:
  struct Head {
    std::string name;  // "" for a single-output model: tags without a head part
    std::shared_ptr<const losses::Loss> loss;
    double weight = 1.0;
    std::vector<NamedMetric> metrics;
    std::string target = "target";  // target, input or a named target of the data
    std::string config_path;        // where the head is configured, for errors
  };

  /// Throws a ConfigError at the head's metrics when two of its metrics would share a tag.
  explicit Objective(std::vector<Head> heads);

  /// Runs the model on `batch` (already on the model's device) and returns the weighted loss,
  /// to call backward() on; adds every head's loss and metric statistics to those so far. The
  /// model's outputs go to `outputs` when given (a loop adds terms of its own to the loss).
  torch::Tensor compute(models::Model& model, const data::Batch& batch,
                        models::NamedOutputs* outputs = nullptr);
  /// The model's outputs for `input`, by head name ("" for a single-output model).
  models::NamedOutputs forward(models::Model& model, const torch::Tensor& input) const;
  /// compute() of outputs forward() gave for `batch` (or for rows of it: `batch` then holds
  /// the same rows).
  torch::Tensor compute_outputs(const models::NamedOutputs& outputs, const data::Batch& batch);
  /// The loss the last compute() returned, detached: a 0-dim tensor on its device, which the
  /// trainer reads when the device gets to it.
  const torch::Tensor& last_loss() const { return last_loss_; }
  /// One head's output for a batch, and what it is compared with.
  struct HeadOutput {
    const std::string& head;  // "" for a single-output model
    const torch::Tensor& output;
    const torch::Tensor& target;  // the head's target: the data's, the input or a named one
    bool first;                   // the batch's first head: a new batch begins
    losses::Loss::Scores scores;  // how its loss makes probabilities of the output
  };
  /// Shows each batch and each head's output to `observer` as compute() runs it, the heads in
  /// their order: TensorBoard's validation images and projector watch validation this way.
  using OutputObserver = std::function<void(const data::Batch&, const HeadOutput&)>;
  void observe_outputs(OutputObserver observer) { observers_.push_back(std::move(observer)); }
  /// Throws a ConfigError at the head's `target` when a head wants a named target that the data
  /// of `split` (which delivers `available`) lacks: before training, not at the first batch.
  void check_targets(const std::vector<std::string>& available, const std::string& split) const;
  /// Forgets the statistics: a new logging window or evaluation begins.
  void reset();
  /// The loss and metrics since the last reset, tagged with `split`; each head's loss is its mean
  /// over all those examples (weighted as the loss weighs them), split/loss their weighted sum.
  MetricValues values(const std::string& split) const;
  /// Whether any example counted since the last reset (a window of batches whose rows were all
  /// refused has none: it has no loss to log).
  bool saw_examples() const;
  /// Every tag values() gives for `split`.
  std::vector<std::string> tags(const std::string& split) const;

  /// The sufficient statistics since the last reset, for ranks to combine: per head its loss sum
  /// and the weight of that sum, then each of its metrics' sums(). Part i adds up element-wise
  /// across ranks when summable[i], else (a metric that keeps its examples) concatenates.
  struct Statistics {
    std::vector<std::vector<double>> parts;
    std::vector<bool> summable;
  };
  Statistics statistics() const;
  /// Replaces the statistics with combined ones, laid out as statistics() gives them.
  void set_statistics(const Statistics& statistics);

 private:
  const torch::Tensor& target_of(const Head& head, const data::Batch& batch) const;
  /// The target of `head` in host memory where the batch keeps a copy there, else target_of().
  const torch::Tensor& host_target_of(const Head& head, const data::Batch& batch) const;
  /// Head `index`'s loss on `output`; adds to its loss sum and metrics.
  torch::Tensor head_loss(size_t index, const torch::Tensor& output, const data::Batch& batch);
  /// Adds a batch's mean `loss` of head `index`, which divides by `weight`, to its sum.
  void add_loss(size_t index, const torch::Tensor& loss, double weight);
  std::string tag(const std::string& split, const Head& head, const std::string& what) const;
  std::string metric_tag(const std::string& split, const Head& head, const NamedMetric& metric,
                         const std::string& key) const;

  // A head's sum of its batch means times their mean_weight(): what was set (combined over
  // ranks) plus what was added since, on the device, so that adding a batch waits for nothing.
  struct LossSum {
    double on_host = 0;
    torch::Tensor on_device;
    double value() const;  // reads the device
  };

  std::vector<Head> heads_;
  std::vector<LossSum> head_loss_sums_;
  std::vector<double> head_loss_weights_;  // per head, of the mean_weight()s in its sum
  torch::Tensor last_loss_;
  std::vector<OutputObserver> observers_;
};

/// Combines every rank's statistics of `objective`, so that each rank's values() cover the
/// examples of all; a single process keeps its own untouched.
void combine_over_ranks(Objective& objective, distributed::Context& context);

}  // namespace kiln::engine
