// exponential: the learning rate times gamma every step, or every epoch with `staircase`
// (torch.optim.lr_scheduler.ExponentialLR stepped per batch or per epoch), counted from the
// first step; an optional warm-up multiplies the first steps.

#include <cmath>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct ExponentialOptions {
  WarmupOptions warmup;
  double gamma = 0.999;
  bool staircase = false;
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("gamma", gamma, "The factor applied every step (every epoch with staircase).")
        .check([](double g) { return g > 0; }, "> 0");
    s.field("staircase", staircase,
            "Apply gamma once per epoch, at its end, instead of after every step.");
  }
};

class Exponential : public Scheduler {
 public:
  Exponential(const ExponentialOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span),
        interval_(o.staircase ? std::max<int64_t>(1, span.steps_per_epoch) : 1),
        gamma_(o.gamma) {}
  double factor(int64_t steps) const override {
    return warmup_.multiplier(steps) * std::pow(gamma_, double(steps / interval_));
  }

 private:
  Warmup warmup_;
  int64_t interval_;  // steps between two applications of gamma
  double gamma_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "exponential", Exponential, ExponentialOptions,
              "The learning rate times gamma every step (or every epoch: staircase), after an "
              "optional linear warm-up.");

}  // namespace kiln::optim
