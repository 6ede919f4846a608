#pragma once
// The linear warm-up that schedules share: from `warmup_start` times the base rate at step 0 to
// the full rate after `warmup` (torch.optim.lr_scheduler.LinearLR's shape). Schedules shaped by
// the length of training (cosine, polynomial, linear_warmup) decay over what follows the warm-up;
// schedules of absolute positions (step, multistep, exponential) count from step 0 and the
// warm-up multiplies them while it lasts (torch's ChainedScheduler of LinearLR and the decay).

#include "kiln/optim/scheduler.h"

namespace kiln::optim {

struct WarmupOptions {
  OptionalPeriod warmup;
  double warmup_start = 0.1;
  void describe(Schema& s) {
    s.field("warmup", warmup,
            "Linear warm-up at the start: steps, epochs or samples; null = none.");
    s.field("warmup_start", warmup_start,
            "The factor of the learning rate at the first step of the warm-up.")
        .in_range(0, 1);
  }
};

class Warmup {
 public:
  Warmup(const WarmupOptions& o, const ScheduleSpan& span)
      : steps_(o.warmup.period ? period_in_steps(*o.warmup.period, span, "warmup") : 0),
        start_(o.warmup_start) {}
  int64_t steps() const { return steps_; }
  bool covers(int64_t steps) const { return steps < steps_; }
  double factor(int64_t steps) const {
    return start_ + (1.0 - start_) * double(steps) / double(steps_);
  }
  /// The warm-up's factor while it lasts, 1 after: for schedules it multiplies.
  double multiplier(int64_t steps) const { return covers(steps) ? factor(steps) : 1.0; }

 private:
  int64_t steps_;
  double start_;
};

/// The steps of training that follow the warm-up, for the schedules that decay over them; a
/// ConfigError when training is of unknown length or no longer than the warm-up.
inline int64_t steps_after_warmup(const Warmup& warmup, const ScheduleSpan& span) {
  int64_t total = required_total_steps(span, "");
  if (total <= warmup.steps())
    throw ConfigError("warmup", "",
                      fmt::format("the warm-up ({} steps) must be shorter than training ({} steps)",
                                  warmup.steps(), total));
  return total - warmup.steps();
}

}  // namespace kiln::optim
