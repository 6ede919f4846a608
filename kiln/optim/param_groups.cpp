#include "kiln/optim/param_groups.h"

#include <fmt/format.h>

#include "kiln/core/error.h"
#include "kiln/optim/hyper_schedules.h"
#include "kiln/optim/optimizer.h"

namespace kiln::optim {

bool matches_pattern(const std::string& pattern, const std::string& name) {
  // Iterative wildcard matching: on a mismatch, let the last `*` swallow one more character.
  size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

constexpr const char* kDecayPath = "train.weight_decay_scales";

// Parameters that share a learning-rate scale and a weight-decay scale.
struct Group {
  double lr_scale, decay_scale;
  std::vector<torch::Tensor> parameters;
};

// Patterns of parameter names and their scales; counts which patterns matched something.
struct ScaleRules {
  const std::map<std::string, double>& scales;
  std::string path;
  std::map<std::string, int> uses;

  // The scale of the longest pattern `name` matches; 1 when none does.
  double scale_of(const std::string& name) {
    const std::string* best = nullptr;
    for (const auto& entry : scales)
      if (matches_pattern(entry.first, name) && (!best || entry.first.size() > best->size()))
        best = &entry.first;
    if (!best) return 1.0;
    ++uses[*best];
    return scales.at(*best);
  }

  void check_all_used(const std::string& example_name) const {
    for (const auto& entry : scales)
      if (!uses.count(entry.first))
        throw ConfigError(path, "",
                          fmt::format("pattern \"{}\" matches no trainable parameter (names look "
                                      "like \"{}\")",
                                      entry.first, example_name));
  }
};

// Trainable parameters by (lr scale, decay scale), in the order the pairs first appear, moved so
// that group 0, whose values are logged, has the configured rate (and decay) when any group does.
std::vector<Group> group_parameters(
    const torch::OrderedDict<std::string, torch::Tensor>& parameters, ScaleRules& lr,
    ScaleRules& decay) {
  std::vector<Group> groups;
  for (const auto& item : parameters) {
    if (!item.value().requires_grad()) continue;
    double lr_scale = lr.scale_of(item.key()), decay_scale = decay.scale_of(item.key());
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.lr_scale == lr_scale && g.decay_scale == decay_scale;
    });
    if (group == groups.end())
      group = groups.insert(groups.end(), Group{lr_scale, decay_scale, {}});
    group->parameters.push_back(item.value());
  }
  if (groups.empty())
    throw ConfigError("train.freeze", "", "every parameter is frozen; nothing would train");
  lr.check_all_used(parameters.begin()->key());
  decay.check_all_used(parameters.begin()->key());
  // Groups of learning-rate scale 1 first, and of those the one of decay scale 1 first.
  std::stable_partition(groups.begin(), groups.end(),
                        [](const Group& g) { return g.decay_scale == 1.0; });
  std::stable_partition(groups.begin(), groups.end(),
                        [](const Group& g) { return g.lr_scale == 1.0; });
  return groups;
}

// Sets each group's weight decay to the configured one times its scale.
void scale_weight_decay(torch::optim::Optimizer& optimizer, const std::vector<Group>& groups) {
  bool scaled = std::any_of(groups.begin(), groups.end(),
                            [](const Group& g) { return g.decay_scale != 1.0; });
  if (!scaled) return;
  auto knob = hyper_parameter_knob(optimizer.defaults(), "weight_decay");
  if (!knob) throw ConfigError(kDecayPath, "", "this optimizer has no weight_decay to scale");
  double configured = knob->get(optimizer.defaults());
  for (size_t i = 0; i < groups.size(); ++i)
    knob->set(optimizer.param_groups()[i].options(), configured * groups[i].decay_scale);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> build_grouped_optimizer(
    const ComponentSpec& spec, const torch::OrderedDict<std::string, torch::Tensor>& parameters,
    const std::map<std::string, double>& lr_scales, const std::string& scales_path,
    const std::map<std::string, double>& weight_decay_scales) {
  ScaleRules lr{lr_scales, scales_path, {}}, decay{weight_decay_scales, kDecayPath, {}};
  std::vector<Group> groups = group_parameters(parameters, lr, decay);
  auto optimizer = optimizer_registry().create(spec, groups.front().parameters);
  double rate = optimizer->defaults().get_lr();
  optimizer->param_groups().front().options().set_lr(rate * groups.front().lr_scale);
  for (size_t i = 1; i < groups.size(); ++i) {
    std::unique_ptr<torch::optim::OptimizerOptions> options = optimizer->defaults().clone();
    options->set_lr(rate * groups[i].lr_scale);
    optimizer->add_param_group(
        torch::optim::OptimizerParamGroup(groups[i].parameters, std::move(options)));
  }
  scale_weight_decay(*optimizer, groups);
  return optimizer;
}

}  // namespace kiln::optim
