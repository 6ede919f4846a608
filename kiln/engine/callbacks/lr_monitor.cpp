// lr_monitor: logs every parameter group's learning rate as train/lr/group<i> (the trainer's
// train/lr is the first group's), so schedules and per-group scales can be checked in the logs.

#include "kiln/engine/callback.h"
#include "kiln/engine/train_options.h"

namespace kiln::engine {
namespace {

struct LrMonitorOptions {
  OptionalPeriod every;
  void describe(Schema& s) { s.field("every", every, "How often to log; null: train.log_every."); }
};

class LrMonitor : public Callback {
 public:
  explicit LrMonitor(const LrMonitorOptions& o) : options_(o) {}

  void on_step_end(TrainerView& view, const Progress& before) override {
    const Period& every = options_.every.period ? *options_.every.period : view.options().log_every;
    if (!every.crossed(before, view.progress())) return;
    MetricValues values;
    const auto& groups = view.optimizer().param_groups();
    for (size_t i = 0; i < groups.size(); ++i)
      values["train/lr/group" + std::to_string(i)] = groups[i].options().get_lr();
    view.record(values);
  }

 private:
  LrMonitorOptions options_;
};

}  // namespace

KILN_REGISTER(callback_registry, "lr_monitor", LrMonitor, LrMonitorOptions,
              "Logs the learning rate of every parameter group as train/lr/group<i>.");

}  // namespace kiln::engine
