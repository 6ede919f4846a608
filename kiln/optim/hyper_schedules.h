#pragma once
// Per-epoch schedules of optimizer hyper-parameters other than the learning rate (`schedules:`,
// e.g. a cosine weight decay or a stepped momentum). Each is a registered schedule whose factor
// multiplies every parameter group's configured value of that hyper-parameter. The factor is
// taken at the first step of the current epoch, so the value holds for a whole epoch and changes
// exactly at epoch boundaries; it is a pure function of the step, so resuming needs no state.
// Thread-safety: one thread.

#include <torch/torch.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/optim/scheduler.h"

namespace kiln::optim {

/// The hyper-parameters a schedule may drive for `optimizer` (weight_decay, momentum, dampening,
/// beta1, beta2, eps, alpha, lr_decay: those it has), sorted; empty for an optimizer kiln does
/// not know.
std::vector<std::string> schedulable_hyper_parameters(const torch::optim::Optimizer& optimizer);

/// Sets every parameter group's scheduled hyper-parameters to their base values times their
/// schedules' factors. The base values are the optimizer's when this is made, so it must be made
/// before any saved optimizer state (whose values are already scheduled) is loaded.
class ScheduledHyperParameters {
 public:
  /// A name the optimizer lacks, or a schedule that reacts to validation, is a ConfigError at
  /// `path`.NAME. `steps_per_epoch` >= 1.
  /// A value out of its range at any epoch start before `total_steps` (0: unknown) is a
  /// ConfigError too; later ones are an Error when reached.
  ScheduledHyperParameters(torch::optim::Optimizer& optimizer,
                           const std::map<std::string, const Scheduler*>& schedules,
                           int64_t steps_per_epoch, int64_t total_steps = 0,
                           const std::string& path = "schedules");
  /// Call before the optimizer step that follows `steps` completed steps.
  void apply(int64_t steps);
  /// The first parameter group's current value of each scheduled hyper-parameter, by name.
  std::map<std::string, double> values() const;

  /// One hyper-parameter of one optimizer's options type.
  struct Knob {
    std::function<double(torch::optim::OptimizerOptions&)> get;
    std::function<void(torch::optim::OptimizerOptions&, double)> set;
    double upper = 0;  // values must stay below this; 0: no bound (betas: 1)
  };

 private:
  struct Driven {
    std::string name, path;
    const Scheduler* schedule;
    Knob knob;
    std::vector<double> base;  // by parameter group
  };

  /// The value `driven` takes for the first group at the epoch that begins at `epoch_start`.
  double value_at(const Driven& driven, int64_t epoch_start) const;
  void check_ahead(const Driven& driven, int64_t total_steps) const;

  torch::optim::Optimizer& optimizer_;
  int64_t steps_per_epoch_;
  std::vector<Driven> driven_;
};

/// Reads and writes hyper-parameter `name` (weight_decay, momentum, ...) of `options`, of any
/// optimizer schedulable_hyper_parameters() knows; none when it has no such hyper-parameter.
std::optional<ScheduledHyperParameters::Knob> hyper_parameter_knob(
    torch::optim::OptimizerOptions& options, const std::string& name);

}  // namespace kiln::optim
