#include "kiln/optim/hyper_schedules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <tuple>

#include "kiln/core/error.h"

namespace kiln::optim {
namespace {

using Knob = ScheduledHyperParameters::Knob;
using torch::optim::OptimizerOptions;

// A knob over one double option of options type O; `field` returns a reference to it (LibTorch's
// TORCH_ARG gives each option a mutable getter). `upper`: see Knob.
template <class O, class Field>
Knob option_knob(Field field, double upper = 0) {
  return {[field](OptimizerOptions& o) { return field(static_cast<O&>(o)); },
          [field](OptimizerOptions& o, double v) { field(static_cast<O&>(o)) = v; }, upper};
}

template <class O>
Knob eps_knob() {
  return option_knob<O>([](O& o) -> double& { return o.eps(); });
}

template <class O>
Knob weight_decay_knob() {
  return option_knob<O>([](O& o) -> double& { return o.weight_decay(); });
}

template <class O>
Knob momentum_knob() {
  return option_knob<O>([](O& o) -> double& { return o.momentum(); });
}

// Adam's betas are one tuple option; each is scheduled on its own, and must stay below 1.
template <class O, size_t I>
Knob beta_knob() {
  return {[](OptimizerOptions& o) { return std::get<I>(static_cast<O&>(o).betas()); },
          [](OptimizerOptions& o, double v) {
            auto betas = static_cast<O&>(o).betas();
            std::get<I>(betas) = v;
            static_cast<O&>(o).betas(betas);
          },
          1.0};
}

template <class O>
std::map<std::string, Knob> adam_knobs() {
  return {{"beta1", beta_knob<O, 0>()},
          {"beta2", beta_knob<O, 1>()},
          {"eps", eps_knob<O>()},
          {"weight_decay", weight_decay_knob<O>()}};
}

// By the options' type, so that any optimizer built on LibTorch's (a plugin's too) is covered.
std::map<std::string, Knob> knobs_of(OptimizerOptions& options) {
  namespace o = torch::optim;
  if (dynamic_cast<o::SGDOptions*>(&options))
    return {{"dampening",
             option_knob<o::SGDOptions>([](o::SGDOptions& x) -> double& { return x.dampening(); })},
            {"momentum", momentum_knob<o::SGDOptions>()},
            {"weight_decay", weight_decay_knob<o::SGDOptions>()}};
  // AdamW's options are not Adam's (no inheritance), so both are listed.
  if (dynamic_cast<o::AdamWOptions*>(&options)) return adam_knobs<o::AdamWOptions>();
  if (dynamic_cast<o::AdamOptions*>(&options)) return adam_knobs<o::AdamOptions>();
  // alpha reaching 1 would freeze RMSprop's running mean of squares (and beyond, turn it negative).
  if (dynamic_cast<o::RMSpropOptions*>(&options))
    return {{"alpha", option_knob<o::RMSpropOptions>(
                          [](o::RMSpropOptions& x) -> double& { return x.alpha(); }, 1.0)},
            {"eps", eps_knob<o::RMSpropOptions>()},
            {"momentum", momentum_knob<o::RMSpropOptions>()},
            {"weight_decay", weight_decay_knob<o::RMSpropOptions>()}};
  if (dynamic_cast<o::AdagradOptions*>(&options))
    return {{"eps", eps_knob<o::AdagradOptions>()},
            {"lr_decay", option_knob<o::AdagradOptions>(
                             [](o::AdagradOptions& x) -> double& { return x.lr_decay(); })},
            {"weight_decay", weight_decay_knob<o::AdagradOptions>()}};
  return {};
}

OptimizerOptions& first_options(const torch::optim::Optimizer& optimizer) {
  // param_groups() is const only in name: the options are shared, and the knobs only read here.
  return const_cast<torch::optim::Optimizer&>(optimizer).param_groups().front().options();
}

std::vector<std::string> names_of(const std::map<std::string, Knob>& knobs) {
  std::vector<std::string> names;
  for (const auto& entry : knobs) names.push_back(entry.first);
  return names;
}

}  // namespace

std::optional<Knob> hyper_parameter_knob(OptimizerOptions& options, const std::string& name) {
  std::map<std::string, Knob> knobs = knobs_of(options);
  auto knob = knobs.find(name);
  if (knob == knobs.end()) return std::nullopt;
  return knob->second;
}

std::vector<std::string> schedulable_hyper_parameters(const torch::optim::Optimizer& optimizer) {
  return names_of(knobs_of(first_options(optimizer)));
}

ScheduledHyperParameters::ScheduledHyperParameters(
    torch::optim::Optimizer& optimizer, const std::map<std::string, const Scheduler*>& schedules,
    int64_t steps_per_epoch, int64_t total_steps, const std::string& path)
    : optimizer_(optimizer), steps_per_epoch_(std::max<int64_t>(1, steps_per_epoch)) {
  std::map<std::string, Knob> knobs = knobs_of(first_options(optimizer));
  for (const auto& [name, schedule] : schedules) {
    std::string at = path + "." + name;
    auto knob = knobs.find(name);
    if (knob == knobs.end())
      throw ConfigError(at, "",
                        knobs.empty() ? "this optimizer has no hyper-parameter kiln can schedule"
                                      : fmt::format("this optimizer has no \"{}\"; it has: {}",
                                                    name, fmt::join(names_of(knobs), ", ")));
    if (!schedule->monitor().empty())
      throw ConfigError(at, "",
                        "a hyper-parameter follows a schedule of the step (cosine, step, ...); "
                        "one that reacts to validation is for the learning rate only");
    Driven driven{name, at, schedule, knob->second, {}};
    for (auto& group : optimizer_.param_groups())
      driven.base.push_back(driven.knob.get(group.options()));
    check_ahead(driven, total_steps);
    driven_.push_back(std::move(driven));
  }
}

double ScheduledHyperParameters::value_at(const Driven& driven, int64_t epoch_start) const {
  return driven.base.front() * driven.schedule->factor(epoch_start);
}

void ScheduledHyperParameters::check_ahead(const Driven& driven, int64_t total_steps) const {
  // RMSprop makes a parameter's momentum buffer at its first step only when momentum > 0 then,
  // and would fail on the missing buffer once a schedule raised it from 0.
  if (driven.name == "momentum" && driven.base.front() > 0 && value_at(driven, 0) == 0 &&
      dynamic_cast<torch::optim::RMSpropOptions*>(&first_options(optimizer_)))
    throw ConfigError(driven.path, "",
                      "rmsprop needs momentum > 0 at the first step to keep momentum at all; "
                      "start the schedule above 0 (warmup_start > 0)");
  if (driven.knob.upper <= 0) return;
  for (int64_t start = 0; start == 0 || start < total_steps; start += steps_per_epoch_) {
    double value = value_at(driven, start);
    if (value >= driven.knob.upper)
      throw ConfigError(
          driven.path, "",
          fmt::format("the schedule takes {} to {:.6g} at epoch {}; it must stay "
                      "below {}",
                      driven.name, value, start / steps_per_epoch_ + 1, driven.knob.upper));
  }
}

void ScheduledHyperParameters::apply(int64_t steps) {
  int64_t epoch_start = steps / steps_per_epoch_ * steps_per_epoch_;
  auto& groups = optimizer_.param_groups();
  for (const Driven& driven : driven_) {
    double factor = driven.schedule->factor(epoch_start);
    for (size_t i = 0; i < groups.size(); ++i) {
      double value = driven.base[i] * factor;
      // Reached only when training runs longer than planned (train.max in time).
      if (driven.knob.upper > 0 && value >= driven.knob.upper)
        throw Error(
            fmt::format("{}: the schedule takes {} to {:.6g} at step {}; it must stay "
                        "below {}",
                        driven.path, driven.name, value, steps + 1, driven.knob.upper));
      driven.knob.set(groups[i].options(), value);
    }
  }
}

std::map<std::string, double> ScheduledHyperParameters::values() const {
  std::map<std::string, double> out;
  for (const Driven& driven : driven_)
    out[driven.name] = driven.knob.get(first_options(optimizer_));
  return out;
}

}  // namespace kiln::optim
