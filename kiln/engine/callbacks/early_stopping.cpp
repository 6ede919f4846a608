// early_stopping: ends training when the monitored tag has not improved by more than min_delta
// for `patience` validations in a row; with restore_best, the weights that were evaluated at the
// best validation (the EMA ones when an ema callback runs) are put back at the end.

#include "kiln/core/json_number.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/callbacks/monitor.h"

namespace kiln::engine {
namespace {

struct EarlyStoppingOptions {
  MonitorOptions compare;
  int64_t patience = 5;
  double min_delta = 0;
  bool restore_best = false;
  void describe(Schema& s) {
    compare.describe(s);
    s.field("patience", patience, "Validations without improvement before training stops.").min(1);
    s.field("min_delta", min_delta, "The least change that counts as an improvement.").min(0);
    s.field("restore_best", restore_best,
            "At the end, put back the weights of the best validation (kept in memory and in "
            "each checkpoint).");
  }
};

class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(const EarlyStoppingOptions& o) : options_(o) {}

  void check(const TrainOptions& train,
             const std::vector<std::string>& monitorable) const override {
    ResolvedMonitor(options_.compare, train, monitorable, config_path);
  }
  void on_fit_begin(TrainerView& view) override {
    compare_ = ResolvedMonitor(options_.compare, view.options(), view.monitorable(), config_path);
  }

  void on_validation_end(TrainerView& view, const MetricValues&) override {
    auto it = view.last_values().find(compare_.monitor);
    if (it == view.last_values().end()) return;
    if (improves(it->second, best_, compare_.mode, options_.min_delta)) {
      best_ = it->second;
      best_step_ = view.progress().steps;
      waited_ = 0;
      if (options_.restore_best) best_weights_ = view.evaluated_weights();
      return;
    }
    waited_ += 1;
  }

  std::optional<std::string> should_stop() const override {
    if (waited_ < options_.patience) return std::nullopt;
    if (!best_)  // every validation so far measured NaN
      return fmt::format("{} has been NaN for {} validations (patience)", compare_.monitor,
                         waited_);
    return fmt::format("{} has not improved on {:.6g} (step {}) for {} validations (patience)",
                       compare_.monitor, *best_, best_step_, waited_);
  }

  void on_fit_end(TrainerView& view) override {
    if (!options_.restore_best || best_weights_.empty() || best_step_ == view.progress().steps)
      return;
    {
      torch::NoGradGuard no_grad;
      for (auto& [name, tensor] : named_state(view.model())) tensor.copy_(best_weights_.at(name));
    }
    view.weights_replaced();
    view.say(fmt::format("restored the weights of step {} ({} {:.6g})", best_step_,
                         compare_.monitor, *best_));
  }

  Json state() const override {
    return {{"best", best_ ? number_to_json(*best_) : Json()},  // a first best may be inf
            {"best_step", best_step_},
            {"waited", waited_}};
  }
  void load_state(const Json& state) override {
    best_ = state.at("best").is_null() ? std::nullopt
                                       : std::optional<double>(number_from_json(state.at("best")));
    best_step_ = state.at("best_step").get<int64_t>();
    waited_ = state.at("waited").get<int64_t>();
  }
  NamedTensors tensors() const override { return best_weights_; }
  void load_tensors(const NamedTensors& tensors) override { best_weights_ = tensors; }

 private:
  EarlyStoppingOptions options_;
  ResolvedMonitor compare_;  // set when fitting begins
  std::optional<double> best_;
  int64_t best_step_ = 0;
  int64_t waited_ = 0;
  NamedTensors best_weights_;
};

}  // namespace

KILN_REGISTER(callback_registry, "early_stopping", EarlyStopping, EarlyStoppingOptions,
              "Stops training when the monitored tag stops improving; can restore the best "
              "weights.");

}  // namespace kiln::engine
