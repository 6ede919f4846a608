#pragma once
// The training loop (docs/design.md §7): batch, forward, loss, backward, step; training metrics and
// throughput every `train.log_every`; validation every `train.validate_every`; until `train.max`,
// a callback's stop or a signal. Everything it measures goes, once, to a MetricSink (metrics.csv,
// the console). Optional behaviour (checkpoint schedules, early stopping, EMA) hangs off it as
// callbacks. It can continue from a checkpoint's TrainState exactly where that checkpoint was
// taken. With several processes (parts.context), each trains on its share of the data: the mean
// gradient is taken between backward and clipping, statistics are combined before they are
// logged, and every decision that changes the loop's course is agreed on by all of them.
// Thread-safety: one thread.

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/console.h"
#include "kiln/core/period.h"
#include "kiln/distributed/context.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/device_readings.h"
#include "kiln/engine/evaluator.h"
#include "kiln/engine/loop.h"
#include "kiln/engine/metric_sink.h"
#include "kiln/engine/precision.h"
#include "kiln/engine/regularization.h"
#include "kiln/engine/step_profiler.h"
#include "kiln/engine/train_options.h"
#include "kiln/engine/train_state.h"
#include "kiln/engine/trainer_checks.h"
#include "kiln/engine/trainer_parts.h"
#include "kiln/optim/hyper_schedules.h"
#include "kiln/optim/scheduler.h"

namespace kiln::engine {

struct TrainerWindow;  // trainer_window.h
struct StepGroup;

struct TrainResult {
  Progress progress;
  MetricValues last;  // the latest value of every tag
  std::optional<BestValue> best;
  data::LoaderPosition data_position;  // where the training loader stopped
  std::string checkpoint;              // the checkpoint written last ("" when none)
  int stopped_by_signal = 0;           // the signal that stopped training, 0 when none
  std::string stop_reason;             // why a callback ended training early ("" when none)
};

class Trainer : private TrainerView {
 public:
  /// Takes the optimizer's learning rates as the schedule's base rates, so it must be built
  /// before a checkpoint's optimizer state is loaded.
  Trainer(TrainerParts parts, const TrainOptions& options, MetricSink& metrics, Console& console,
          Clock clock);
  /// Continues from a checkpoint: loads its weights and optimizer state, then takes up `state`
  /// (read_train_state of the same folder).
  void resume(const TrainState& state, const std::string& checkpoint_dir);
  /// Starts a later stage where `previous` (the stage before, in this process) ended: its
  /// progress (parts.stage.start), best and latest values and final checkpoint carry over.
  void continue_from(const TrainResult& previous);
  TrainResult fit();

 private:
  using Window = TrainerWindow;  // training statistics since the last log line
  using Group = StepGroup;       // the batches of one optimizer step (train.accumulate)
  enum class StepOutcome { kStepped, kSkipped, kRewound };
  /// Trains until the end or a stop; true when a NaN rewind moved training back to a checkpoint
  /// (the caller then runs it again from there).
  bool run_epochs(Window& window);
  /// Forward and backward of one batch of the group; gradients add up.
  void accumulate_batch(const data::Batch& batch, Group& group);
  StepOutcome optimizer_step(const Group& group, Window& window);
  /// With several processes, replaces the gradients by their mean over them and tells whether
  /// every process's `loss` was finite (a host read); moves `started` past the exchange. Alone,
  /// true at once.
  bool exchange_gradients(const torch::Tensor& loss, Window& window, double& started);
  /// Drops the optimizer's parameters' gradients before a step's first backward.
  void clear_gradients();
  /// Whether train.on_nan looks at a step's values before its update (skip_step, fp16 loss
  /// scaling, several processes), which waits for the device; stop and rewind act a step later.
  bool checks_before_update() const;
  /// Sends the step's mean loss and gradient norm (each when defined) to readings_.
  void post_step_values(const torch::Tensor& loss, const torch::Tensor& norm);
  /// Acts on the values of every step through `step` not acted on yet, waiting for those the
  /// device has not delivered: train.on_nan for one not finite (its outcome; later steps are
  /// forgotten), train/grad_norm and the progress bar's loss for the others.
  StepOutcome settle_through(int64_t step, Window& window);
  /// train.on_nan for a step whose loss or gradients are not finite.
  StepOutcome on_non_finite(const std::string& what);
  void rewind(const std::string& what);
  /// The checkpoint a rewind goes back to, as rank 0 finds it; an Error saying `what` when none.
  std::string checkpoint_to_rewind_to(const std::string& what);
  /// The callbacks, logging, validation and checkpoint after a step; true when the step's values
  /// made a NaN rewind (the caller then runs the loop again from the checkpoint).
  bool after_step(const Progress& before, Window& window);
  /// Tells the profiler, if any, that a phase of the current step ran from `begin` to `end`.
  void profile(const char* phase, double begin, double end) {
    if (parts_.profiler) parts_.profiler->phase(phase, begin, end);
  }
  /// Whether to stop now, as all processes agree: a signal, a callback, train.stop_at or
  /// train.max. Right after a step that neither logged nor validated, the votes taken with the
  /// step's other decisions (after_step) answer: the ranks meet once per step to decide.
  bool should_stop();
  /// This process's votes to stop; its reason, when a callback or train.stop_at gave one.
  std::vector<double> stop_votes(std::optional<std::string>& reason) const;
  /// Acts on the votes of every process (reduced); true when training stops.
  bool count_stop_votes(const std::vector<double>& votes, const std::optional<std::string>& reason);
  /// Why train.monitor has reached train.stop_at, or nothing when it has not.
  std::optional<std::string> reached_stop_at() const;
  void log_training(Window& window);
  void validate();
  /// At the end of an epoch: how many damaged records the training data dropped.
  void report_skipped(int64_t epoch);
  /// ... and how many of its values no vocabulary had, when that grew.
  void report_unseen(int64_t epoch);
  TrainState capture_state() const;
  void load_scheduler_state(const Json& state, const std::string& file);
  /// Progress within the current stage, which train.max and the schedule measure.
  Progress stage_progress() const;
  void show_progress(int64_t total);

  // TrainerView
  models::Model& model() override { return parts_.model; }
  torch::optim::Optimizer& optimizer() override { return parts_.optimizer; }
  const TrainOptions& options() const override { return options_; }
  const Progress& progress() const override { return progress_; }
  const MetricValues& last_values() const override { return result_.last; }
  std::vector<std::string> monitorable() const override;
  void record(const MetricValues& values) override;
  void say(const std::string& line) override { console_.line(line); }
  void request_checkpoint() override { checkpoint_requested_ = true; }
  void save_checkpoint();
  std::string checkpoints_dir() const override { return parts_.checkpoints_dir; }
  void weights_replaced() override;
  NamedTensors evaluated_weights() const override;
  const NamedTensors* evaluation_weights() const;

  TrainerParts parts_;
  std::unique_ptr<Loop> own_loop_;  // the supervised loop, when parts_ names none
  Loop* loop_;
  TrainOptions options_;
  MetricSink& metrics_;
  Console& console_;
  Clock clock_;
  double start_ = 0;
  double smoothed_loss_ = -1;  // for the progress bar; -1 until the first step
  std::optional<optim::ScheduledLearningRates> learning_rates_;
  Precision precision_;
  DeviceReadings readings_;  // the steps' losses and gradient norms, on their way to the host
  std::vector<torch::Tensor> trainable_;  // the optimizer's parameters
  double lr_multiplier_ = 1.0;            // halved by each NaN rewind
  int64_t rewinds_ = 0;
  int64_t skipped_in_a_row_ = 0, skipped_steps_ = 0;
  int64_t reported_unseen_ = 0;  // values of the training data no vocabulary had, so far
  std::optional<optim::ScheduledHyperParameters> hyper_parameters_;
  Progress progress_;
  bool validated_ = false;   // a validation ran after the last step
  int64_t saved_step_ = -1;  // the step of the last checkpoint written with the current weights
  bool checkpoint_requested_ = false;
  // Every process's stop votes, taken at the end of the last step, with this one's reason.
  struct StopVotes {
    std::vector<double> votes;
    std::optional<std::string> reason;
  };
  std::optional<StopVotes> step_votes_;
  TrainResult result_;
};

}  // namespace kiln::engine
