#pragma once
// Learning-rate schedules (DESIGN.md §4 `scheduler:`). A schedule is a pure function from the
// number of optimizer steps taken to a factor of each parameter group's base learning rate, so
// it has no state to save: a resumed run that knows its step knows its learning rate.
// Thread-safety: factor() is const.

#include <torch/torch.h>

#include <vector>

#include "kiln/core/period.h"
#include "kiln/core/registry.h"

namespace kiln::optim {

/// How long training runs, for schedules that are shaped by it; known before the first step.
struct ScheduleSpan {
  int64_t total_steps = 0;  // 0: unknown (train.max in time)
  int64_t steps_per_epoch = 1;
  int64_t batch_size = 1;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// The factor of the base learning rates for the step that follows `steps` completed ones.
  virtual double factor(int64_t steps) const = 0;
};

using SchedulerRegistry = Registry<Scheduler, const ScheduleSpan&>;
SchedulerRegistry& scheduler_registry();

/// `period` in optimizer steps, rounded up; a period in time has no step count and is refused
/// as a ConfigError at `path`.
int64_t period_in_steps(const Period& period, const ScheduleSpan& span, const std::string& path);

/// The span's total, or a ConfigError at `path` naming the schedule when it is unknown.
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
