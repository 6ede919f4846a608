// constant: the optimizer's learning rates throughout, after an optional linear warm-up.

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct ConstantOptions {
  WarmupOptions warmup;
  void describe(Schema& s) { warmup.describe(s); }
};

class Constant : public Scheduler {
 public:
  Constant(const ConstantOptions& o, const ScheduleSpan& span) : warmup_(o.warmup, span) {}
  double factor(int64_t steps) const override {
    return warmup_.covers(steps) ? warmup_.factor(steps) : 1.0;
  }

 private:
  Warmup warmup_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "constant", Constant, ConstantOptions,
              "The optimizer's learning rates, after an optional linear warm-up.");

}  // namespace kiln::optim
