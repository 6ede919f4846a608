#include "kiln/optim/scheduler.h"

#include <cmath>

namespace kiln::optim {

SchedulerRegistry& scheduler_registry() {
  static SchedulerRegistry registry(
      "scheduler", "Learning-rate schedules: a factor of the optimizer's rates by step.");
  return registry;
}

int64_t period_in_steps(const Period& period, const ScheduleSpan& span, const std::string& path) {
  std::optional<int64_t> steps =
      period.in_steps(double(span.steps_per_epoch), double(std::max<int64_t>(1, span.batch_size)));
  if (!steps)
    throw ConfigError(
        path, "",
        "\"" + period.to_string() + "\" is a time; a schedule needs steps, epochs or samples");
  return *steps;
}

int64_t required_total_steps(const ScheduleSpan& span, const std::string& path) {
  if (span.total_steps <= 0)
    throw ConfigError(path, "",
                      "this schedule is shaped by the length of training, but train.max is a "
                      "time; give train.max in steps, epochs or samples");
  return span.total_steps;
}

ScheduledLearningRates::ScheduledLearningRates(torch::optim::Optimizer& optimizer,
                                               const Scheduler& scheduler)
    : optimizer_(optimizer), scheduler_(scheduler) {
  for (const auto& group : optimizer_.param_groups())
    base_rates_.push_back(group.options().get_lr());
}

void ScheduledLearningRates::apply(int64_t steps, double multiplier) {
  double factor = scheduler_.factor(steps) * multiplier;
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().set_lr(base_rates_[i] * factor);
}

}  // namespace kiln::optim
