// multistep: the learning rate times gamma at each milestone
// (torch.optim.lr_scheduler.MultiStepLR), positions counted from the first step; an optional
// warm-up multiplies the first steps.

#include <cmath>

#include "kiln/optim/scheduler.h"
#include "kiln/optim/schedulers/warmup.h"

namespace kiln::optim {
namespace {

struct MultiStepOptions {
  WarmupOptions warmup;
  std::vector<Period> milestones;
  double gamma = 0.1;
  void describe(Schema& s) {
    warmup.describe(s);
    s.field("milestones", milestones,
            "Where the rate is multiplied by gamma, from the start of training: steps, epochs "
            "or samples, e.g. [30 epochs, 60 epochs].")
        .check([](const std::vector<Period>& m) { return !m.empty(); }, "of at least one period")
        .require();
    s.field("gamma", gamma, "The factor applied at each milestone.")
        .check([](double g) { return g > 0; }, "> 0");
  }
};

class MultiStep : public Scheduler {
 public:
  MultiStep(const MultiStepOptions& o, const ScheduleSpan& span)
      : warmup_(o.warmup, span), gamma_(o.gamma) {
    for (size_t i = 0; i < o.milestones.size(); ++i)
      milestones_.push_back(period_in_steps(o.milestones[i], span, index_path("milestones", i)));
  }
  double factor(int64_t steps) const override {
    // Milestones in any order, a repeated one counting twice, as MultiStepLR's counter has them.
    int passed = 0;
    for (int64_t milestone : milestones_) passed += milestone <= steps ? 1 : 0;
    return warmup_.multiplier(steps) * std::pow(gamma_, passed);
  }

 private:
  Warmup warmup_;
  std::vector<int64_t> milestones_;
  double gamma_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "multistep", MultiStep, MultiStepOptions,
              "The learning rate times gamma at each milestone, after an optional linear "
              "warm-up.");

}  // namespace kiln::optim
