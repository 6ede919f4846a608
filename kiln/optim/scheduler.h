#pragma once
// Learning-rate schedules (docs/design.md §4 `scheduler:`). A schedule gives a factor of each
// parameter group's base learning rate. Most are pure functions of the number of optimizer steps
// taken, so a resumed run that knows its step knows its rate; a schedule that reacts to validation
// results (reduce_on_plateau) also has state, which the trainer saves in every checkpoint's
// TrainState. The same schedules drive other hyper-parameters per epoch (hyper_schedules.h).
// Thread-safety: one thread; factor() is const.

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/registry.h"

namespace kiln::optim {

/// How long training runs, for schedules that are shaped by it; known before the first step.
struct ScheduleSpan {
  int64_t total_steps = 0;  // 0: unknown (train.max in time)
  int64_t steps_per_epoch = 1;
  int64_t batch_size = 1;
  // The run's headline metric (train.monitor, train.mode): what a schedule that watches a metric
  // watches unless it names its own.
  std::string monitor = "val/loss";
  Mode mode = Mode::kMin;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// The factor of the base learning rates for the step that follows `steps` completed ones.
  virtual double factor(int64_t steps) const = 0;

  /// The tag a schedule that reacts to validation watches (checked by the trainer against what
  /// it measures); "" for a pure function of the step.
  virtual std::string monitor() const { return ""; }
  /// After each validation, with the latest value of every tag. Returns a line for the console
  /// when the schedule changed its factor, "" otherwise.
  virtual std::string observe(const std::map<std::string, double>& /*values*/) { return ""; }
  /// What a resumed run needs besides the step (empty for a pure function of the step).
  virtual Json state() const { return Json::object(); }
  /// Restores state(); throws (any std::exception) when `state` does not fit.
  virtual void load_state(const Json& /*state*/) {}
};

using SchedulerRegistry = Registry<Scheduler, const ScheduleSpan&>;
SchedulerRegistry& scheduler_registry();

/// `period` in optimizer steps, rounded up; a period in time has no step count and is refused
/// as a ConfigError at `path`, relative to the schedule (the registry puts it under the
/// schedule's own path: scheduler.warmup, schedules.momentum.warmup).
int64_t period_in_steps(const Period& period, const ScheduleSpan& span, const std::string& path);

/// The span's total, or a ConfigError at `path` (relative to the schedule, "" for the schedule
/// itself) when it is unknown.
int64_t required_total_steps(const ScheduleSpan& span, const std::string& path);

/// Sets every parameter group's learning rate to its base rate times a schedule's factor. The
/// base rates are the optimizer's when this is made, so it must be made before any saved
/// optimizer state (whose rates are already scheduled) is loaded into the optimizer.
class ScheduledLearningRates {
 public:
  ScheduledLearningRates(torch::optim::Optimizer& optimizer, const Scheduler& scheduler);
  /// Call before the optimizer step that follows `steps` completed steps; `multiplier` scales
  /// the base rates too (halved by each NaN rewind).
  void apply(int64_t steps, double multiplier = 1.0);

 private:
  torch::optim::Optimizer& optimizer_;
  const Scheduler& scheduler_;
  std::vector<double> base_rates_;
};

}  // namespace kiln::optim
