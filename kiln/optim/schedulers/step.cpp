// step: the learning rate times gamma after every `step_size` (torch.optim.lr_scheduler.StepLR),
// counted from the first step; an optional warm-up multiplies the first steps.

#include <cmath>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct StepOptions {
  WarmupOptions warmup;
  Period step_size{1, Period::Unit::kEpochs};
  double gamma = 0.1;
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("step_size", step_size,
            "How often the rate is multiplied by gamma: steps, epochs "
            "or samples.");
    s.field("gamma", gamma, "The factor applied at the end of every step_size.")
        .check([](double g) { return g > 0; }, "> 0");
  }
};

class Step : public Scheduler {
 public:
  Step(const StepOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span),
        size_(period_in_steps(o.step_size, span, "step_size")),
        gamma_(o.gamma) {}
  double factor(int64_t steps) const override {
    return warmup_.multiplier(steps) * std::pow(gamma_, double(steps / size_));
  }

 private:
  Warmup warmup_;
  int64_t size_;
  double gamma_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "step", Step, StepOptions,
              "The learning rate times gamma every step_size, after an optional linear warm-up.");

}  // namespace kiln::optim
