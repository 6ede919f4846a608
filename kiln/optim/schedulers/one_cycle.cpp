// one_cycle: Smith's 1cycle policy as torch.optim.lr_scheduler.OneCycleLR shapes it: the
// optimizer's lr is the peak; the rate rises from lr/div_factor to lr over the first pct_start of
// training, then anneals to lr/(div_factor x final_div_factor) at its last step. Only the
// learning rate is cycled, not the momentum (OneCycleLR's cycle_momentum=False).

#include <cmath>

#include "kiln/optim/scheduler.h"

namespace kiln::optim {
namespace {

// The shape of one_cycle's rise and fall.
enum class OneCycleAnneal { kCos, kLinear };
EnumNameList<OneCycleAnneal> enum_names(OneCycleAnneal) {
  return {{OneCycleAnneal::kCos, "cos"}, {OneCycleAnneal::kLinear, "linear"}};
}

struct OneCycleOptions {
  double pct_start = 0.3;
  double div_factor = 25.0;
  double final_div_factor = 1e4;
  OneCycleAnneal anneal = OneCycleAnneal::kCos;
  void describe(Schema& s) {
    s.field("pct_start", pct_start, "The fraction of training spent raising the rate.")
        .in_range(0, 1);
    s.field("div_factor", div_factor, "The first rate is lr / div_factor.")
        .check([](double d) { return d > 0; }, "> 0");
    s.field("final_div_factor", final_div_factor,
            "The last rate is lr / (div_factor x final_div_factor).")
        .check([](double d) { return d > 0; }, "> 0");
    s.field("anneal", anneal, "The shape of both phases: half cosines or straight lines.");
  }
};

class OneCycle : public Scheduler {
 public:
  OneCycle(const OneCycleOptions& o, const ScheduleSpan& span)
      : last_step_(double(required_total_steps(span, "") - 1)),
        peak_step_(o.pct_start * double(span.total_steps) - 1),
        initial_(1.0 / o.div_factor),
        final_(initial_ / o.final_div_factor),
        cosine_(o.anneal == OneCycleAnneal::kCos) {
    // OneCycleLR divides by the rise's length in steps (pct_start x total - 1), so it must not
    // be 0; and a cycle needs room to rise and fall.
    if (peak_step_ < 1 || peak_step_ >= last_step_)
      throw ConfigError(
          "pct_start", "",
          fmt::format("the rise lasts pct_start x {} steps = {} steps; it must be at least "
                      "2 steps and shorter than training",
                      span.total_steps, peak_step_ + 1));
  }
  double factor(int64_t steps) const override {
    double step = double(steps);
    if (step <= peak_step_) return anneal(initial_, 1.0, step / peak_step_);
    double done = std::min(1.0, (step - peak_step_) / (last_step_ - peak_step_));
    return anneal(1.0, final_, done);
  }

 private:
  double anneal(double from, double to, double done) const {
    if (cosine_) return to + (from - to) / 2.0 * (std::cos(M_PI * done) + 1.0);
    return from + (to - from) * done;
  }

  double last_step_, peak_step_;  // fractional, as OneCycleLR computes them
  double initial_, final_;
  bool cosine_;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "one_cycle", OneCycle, OneCycleOptions,
              "1cycle: the rate rises to optimizer.lr, then anneals far below it (learning rate "
              "only; momentum is not cycled).");

}  // namespace kiln::optim
