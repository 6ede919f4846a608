// cosine: half a cosine from the full learning rate down to a floor over the training run
// (Loshchilov & Hutter's SGDR without restarts), after an optional linear warm-up.

#include <cmath>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct CosineOptions {
  WarmupOptions warmup;
  double floor = 0.0;
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("floor", floor, "The factor of the learning rate at the end of training.")
        .in_range(0, 1);
  }
};

class Cosine : public Scheduler {
 public:
  Cosine(const CosineOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span), decay_steps_(steps_after_warmup(warmup_, span)), floor_(o.floor) {}
  double factor(int64_t steps) const override {
    if (warmup_.covers(steps)) return warmup_.factor(steps);
    double done = std::min(1.0, double(steps - warmup_.steps()) / double(decay_steps_));
    return floor_ + (1.0 - floor_) * 0.5 * (1.0 + std::cos(M_PI * done));
  }

 private:
  Warmup warmup_;
  int64_t decay_steps_;
  double floor_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "cosine", Cosine, CosineOptions,
              "Cosine decay from the learning rate to floor x rate over training, after an "
              "optional linear warm-up.");

}  // namespace kiln::optim
