#include "kiln/optim/param_groups.h"

#include <fmt/format.h>

#include "kiln/core/error.h"
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

struct Group {
  double scale;
  std::vector<torch::Tensor> parameters;
};

// Parameters by scale, in the order their scales first appear, the scale-1 group moved first so
// that the logged learning rate is the configured one.
std::vector<Group> group_by_scale(const torch::OrderedDict<std::string, torch::Tensor>& parameters,
                                  const std::map<std::string, double>& lr_scales,
                                  const std::string& scales_path) {
  std::vector<Group> groups;
  std::map<std::string, int> uses;
  for (const auto& item : parameters) {
    if (!item.value().requires_grad()) continue;
    const std::string* best = nullptr;
    for (const auto& entry : lr_scales)
      if (matches_pattern(entry.first, item.key()) && (!best || entry.first.size() > best->size()))
        best = &entry.first;
    double scale = best ? lr_scales.at(*best) : 1.0;
    if (best) ++uses[*best];
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& g) { return g.scale == scale; });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{scale, {}});
    group->parameters.push_back(item.value());
  }
  if (groups.empty())
    throw ConfigError("train.freeze", "", "every parameter is frozen; nothing would train");
  for (const auto& entry : lr_scales)
    if (!uses.count(entry.first))
      throw ConfigError(scales_path, "",
                        fmt::format("pattern \"{}\" matches no trainable parameter (names look "
                                    "like \"{}\")",
                                    entry.first, parameters.begin()->key()));
  std::stable_partition(groups.begin(), groups.end(),
                        [](const Group& g) { return g.scale == 1.0; });
  return groups;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> build_grouped_optimizer(
    const ComponentSpec& spec, const torch::OrderedDict<std::string, torch::Tensor>& parameters,
    const std::map<std::string, double>& lr_scales, const std::string& scales_path) {
  std::vector<Group> groups = group_by_scale(parameters, lr_scales, scales_path);
  auto optimizer = optimizer_registry().create(spec, groups.front().parameters);
  double lr = optimizer->defaults().get_lr();
  optimizer->param_groups().front().options().set_lr(lr * groups.front().scale);
  for (size_t i = 1; i < groups.size(); ++i) {
    std::unique_ptr<torch::optim::OptimizerOptions> options = optimizer->defaults().clone();
    options->set_lr(lr * groups[i].scale);
    optimizer->add_param_group(
        torch::optim::OptimizerParamGroup(groups[i].parameters, std::move(options)));
  }
  return optimizer;
}

}  // namespace kiln::optim
