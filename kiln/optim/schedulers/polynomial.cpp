// polynomial: (1 - t)^power from the full learning rate down to a floor over the training run,
// t the fraction of the decay done (torch.optim.lr_scheduler.PolynomialLR, with TensorFlow's
// PolynomialDecay end rate as the floor), after an optional linear warm-up.

#include <cmath>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct PolynomialOptions {
  WarmupOptions warmup;
  double power = 1.0;
  double floor = 0.0;
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("power", power, "The exponent of the decay: 1 is linear, 2 quadratic, ...")
        .check([](double p) { return p > 0; }, "> 0");
    s.field("floor", floor, "The factor of the learning rate at the end of training.")
        .in_range(0, 1);
  }
};

class Polynomial : public Scheduler {
 public:
  Polynomial(const PolynomialOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span),
        decay_steps_(steps_after_warmup(warmup_, span)),
        power_(o.power),
        floor_(o.floor) {}
  double factor(int64_t steps) const override {
    if (warmup_.covers(steps)) return warmup_.factor(steps);
    double done = std::min(1.0, double(steps - warmup_.steps()) / double(decay_steps_));
    return floor_ + (1.0 - floor_) * std::pow(1.0 - done, power_);
  }

 private:
  Warmup warmup_;
  int64_t decay_steps_;
  double power_, floor_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "polynomial", Polynomial, PolynomialOptions,
              "Polynomial decay (1 - t)^power to floor x rate over training, after an optional "
              "linear warm-up.");

}  // namespace kiln::optim
