#pragma once
// The training loop (DESIGN.md §7): batch, forward, loss, backward, step; training metrics and
// throughput every `train.log_every`; validation every `train.validate_every`; until `train.max`.
// Everything it measures goes to metrics.csv and the console. Optional behaviour (checkpoint
// schedules, early stopping, EMA) will hang off it as callbacks (issue #5).
// Thread-safety: one thread.

#include <optional>
#include <string>
#include <vector>

#include "kiln/core/period.h"
#include "kiln/engine/console.h"
#include "kiln/engine/evaluator.h"
#include "kiln/engine/experiment_config.h"
#include "kiln/engine/run_dir.h"
#include "kiln/optim/scheduler.h"

namespace kiln::engine {

/// What the trainer works on; all references outlive the trainer.
struct TrainerParts {
  models::Model& model;
  torch::optim::Optimizer& optimizer;
  Objective& objective;  // measured on training batches
  data::Loader& train;
  data::Loader* val = nullptr;  // optional
  torch::Device device = torch::kCPU;
  // A separate instance for validation, so that a validation in the middle of a logging window
  // does not reset the training statistics; required when `val` is given.
  Objective* val_objective = nullptr;
  const optim::Scheduler* scheduler = nullptr;  // optional: the optimizer's rates throughout
};

struct BestValue {
  std::string metric;
  double value = 0;
  int64_t step = 0;
};

struct TrainResult {
  Progress progress;
  MetricValues last;  // the latest value of every tag
  std::optional<BestValue> best;
  data::LoaderPosition data_position;  // where the training loader stopped
};

class Trainer {
 public:
  Trainer(TrainerParts parts, const TrainOptions& options, MetricsLog& log, Console& console,
          Clock clock);
  TrainResult fit();

 private:
  struct Window;  // training statistics since the last log line
  void train_step(const data::Batch& batch, Window& window);
  void log_training(Window& window);
  void validate();
  /// At the end of an epoch: how many damaged records the training data dropped.
  void report_skipped(int64_t epoch);
  void record(const MetricValues& values);

  TrainerParts parts_;
  TrainOptions options_;
  MetricsLog& log_;
  Console& console_;
  Clock clock_;
  double start_ = 0;
  double smoothed_loss_ = -1;  // for the progress bar; -1 until the first step
  std::optional<optim::ScheduledLearningRates> learning_rates_;
  Progress progress_;
  TrainResult result_;
};

/// How many steps `max` takes over `train` (whose batches per epoch are known); 0 for a time.
int64_t planned_steps(const Period& max, const data::Loader& train);

/// The tags `train.monitor` may name for this experiment, e.g. val/loss, val/accuracy.
std::vector<std::string> monitorable_tags(const Objective& objective, bool has_val);

}  // namespace kiln::engine
