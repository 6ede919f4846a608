// linear_warmup: a linear rise from warmup_start (0 by default) to the full rate over the
// warm-up, then a linear decay to `floor` at the end of training: the schedule BERT and the
// Hugging Face get_linear_schedule_with_warmup use.

#include <algorithm>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct LinearWarmupOptions {
  WarmupOptions warmup;
  double floor = 0.0;
  LinearWarmupOptions() { warmup.warmup_start = 0.0; }  // the rise starts from 0, as BERT's
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("floor", floor, "The factor of the learning rate at the end of training.")
        .in_range(0, 1);
  }
};

class LinearWarmup : public Scheduler {
 public:
  LinearWarmup(const LinearWarmupOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span), decay_steps_(steps_after_warmup(warmup_, span)), floor_(o.floor) {}
  double factor(int64_t steps) const override {
    if (warmup_.covers(steps)) return warmup_.factor(steps);
    double left = std::max(0.0, 1.0 - double(steps - warmup_.steps()) / double(decay_steps_));
    return floor_ + (1.0 - floor_) * left;
  }

 private:
  Warmup warmup_;
  int64_t decay_steps_;
  double floor_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "linear_warmup", LinearWarmup, LinearWarmupOptions,
              "Linear warm-up from 0, then linear decay to floor x rate at the end of training.");

}  // namespace kiln::optim
