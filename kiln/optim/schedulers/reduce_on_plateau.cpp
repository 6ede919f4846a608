// reduce_on_plateau: the learning rate times `factor` once the monitored tag has not improved for
// more than `patience` validations (torch.optim.lr_scheduler.ReduceLROnPlateau). Unlike the
// other schedules it reacts to results, so its factor, best value and counters are state that
// every checkpoint keeps.

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "kiln/core/mode.h"
#include "kiln/optim/scheduler.h"

namespace kiln::optim {
namespace {

// How reduce_on_plateau's threshold is measured: a fraction of the best value, or an amount.
enum class PlateauThreshold { kRelative, kAbsolute };
EnumNameList<PlateauThreshold> enum_names(PlateauThreshold) {
  return {{PlateauThreshold::kRelative, "rel"}, {PlateauThreshold::kAbsolute, "abs"}};
}

struct ReduceOnPlateauOptions {
  std::string monitor;                  // "" = train.monitor
  ModeOrAuto mode = ModeOrAuto::kAuto;  // auto = train.mode
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  PlateauThreshold threshold_mode = PlateauThreshold::kRelative;
  int64_t cooldown = 0;
  double floor = 0.0;
  void describe(Schema& s) {
    s.field("monitor", monitor, "The tag watched, e.g. val/loss; empty: train.monitor.");
    s.field("mode", mode, "Whether the watched tag is better lower or higher; auto: train.mode.");
    s.field("factor", factor, "What the learning rate is multiplied by at each reduction.")
        .check([](double f) { return f > 0 && f < 1; }, "in (0, 1)");
    s.field("patience", patience,
            "Validations without improvement that are tolerated; the next one reduces.")
        .min(0);
    s.field("threshold", threshold,
            "The least improvement that counts: a fraction of the best value (rel) or an "
            "amount (abs).")
        .min(0);
    s.field("threshold_mode", threshold_mode, "How threshold is measured.");
    s.field("cooldown", cooldown, "Validations after a reduction during which none is counted.")
        .min(0);
    s.field("floor", floor, "The least factor of the learning rate.").in_range(0, 1);
  }
};

class ReduceOnPlateau : public Scheduler {
 public:
  ReduceOnPlateau(const ReduceOnPlateauOptions& o, const ScheduleSpan& span)
      : options_(o), mode_(resolve_mode(o.mode, span.mode)) {
    if (options_.monitor.empty()) options_.monitor = span.monitor;
    best_ = worst();
  }
  double factor(int64_t /*steps*/) const override { return factor_; }
  std::string monitor() const override { return options_.monitor; }

  std::string observe(const std::map<std::string, double>& values) override {
    auto it = values.find(options_.monitor);
    if (it == values.end()) return "";
    count(it->second);
    if (waited_ <= options_.patience) return "";
    waited_ = 0;
    cooldown_left_ = options_.cooldown;
    return reduce();
  }

  Json state() const override {
    // JSON has no infinity: the best value before any validation is written as null.
    return {{"factor", factor_},
            {"best", std::isinf(best_) ? Json() : Json(best_)},
            {"waited", waited_},
            {"cooldown_left", cooldown_left_}};
  }
  void load_state(const Json& state) override {
    factor_ = state.at("factor").get<double>();
    best_ = state.at("best").is_null() ? worst() : state.at("best").get<double>();
    waited_ = state.at("waited").get<int64_t>();
    cooldown_left_ = state.at("cooldown_left").get<int64_t>();
  }

 private:
  double worst() const {
    double inf = std::numeric_limits<double>::infinity();
    return mode_ == Mode::kMax ? -inf : inf;
  }

  bool improves(double value) const {
    bool rel = options_.threshold_mode == PlateauThreshold::kRelative;
    if (mode_ == Mode::kMax)
      return value > (rel ? best_ * (1 + options_.threshold) : best_ + options_.threshold);
    return value < (rel ? best_ * (1 - options_.threshold) : best_ - options_.threshold);
  }

  // One validation's value, counted as torch counts it: a cooldown swallows bad validations.
  void count(double value) {
    if (improves(value)) {
      best_ = value;
      waited_ = 0;
    } else {
      waited_ += 1;
    }
    if (cooldown_left_ > 0) {
      cooldown_left_ -= 1;
      waited_ = 0;
    }
  }

  std::string reduce() {
    double reduced = std::max(factor_ * options_.factor, options_.floor);
    // torch ignores changes below its eps (1e-8); here of the factor, not of the rate.
    if (factor_ - reduced <= 1e-8) return "";
    factor_ = reduced;
    return fmt::format(
        "reduce_on_plateau: {} has not improved on {:.6g} for {} validations; learning rate "
        "factor now {:.6g}",
        options_.monitor, best_, options_.patience + 1, factor_);
  }

  ReduceOnPlateauOptions options_;
  Mode mode_;
  double factor_ = 1.0;
  double best_;
  int64_t waited_ = 0;  // validations without improvement (torch's num_bad_epochs)
  int64_t cooldown_left_ = 0;
};

}  // namespace

KILN_REGISTER(scheduler_registry, "reduce_on_plateau", ReduceOnPlateau, ReduceOnPlateauOptions,
              "The learning rate times factor when the monitored tag stops improving for "
              "patience validations (reacts to validation; its state is checkpointed).");

}  // namespace kiln::optim
