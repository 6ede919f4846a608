#pragma once
// The linear warm-up that schedules share: from `warmup_start` times the base rate at step 0 to
// the full rate after `warmup` (torch.optim.lr_scheduler.LinearLR's shape).

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
      : steps_(o.warmup.period ? period_in_steps(*o.warmup.period, span, "scheduler.warmup") : 0),
        start_(o.warmup_start) {}
  int64_t steps() const { return steps_; }
  bool covers(int64_t steps) const { return steps < steps_; }
  double factor(int64_t steps) const {
    return start_ + (1.0 - start_) * double(steps) / double(steps_);
  }

 private:
  int64_t steps_;
  double start_;
};

}  // namespace kiln::optim
