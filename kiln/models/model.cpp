#include "kiln/models/model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kiln/core/suggest.h"

namespace kiln::models {

ModelRegistry& model_registry() {
  static ModelRegistry registry("model", "Whole networks, built for the shape of the data.");
  return registry;
}

NamedOutputs Model::forward_named(const torch::Tensor& input) {
  NamedOutputs outputs;
  outputs.insert(output_name(), forward(input));
  return outputs;
}

void Model::train(bool on) {
  torch::nn::Module::train(on);
  for (auto& module : frozen_) module->eval();
}

namespace {

std::vector<std::string> top_level_paths(const Model& model) {
  std::vector<std::string> paths;
  for (const auto& child : model.named_children()) paths.push_back(child.key());
  return paths;
}

std::vector<std::string> all_paths(const Model& model) {
  std::vector<std::string> paths;
  for (const auto& module : model.named_modules("", /*include_self=*/false))
    paths.push_back(module.key());
  for (const auto& parameter : model.named_parameters()) paths.push_back(parameter.key());
  return paths;
}

}  // namespace

void freeze(Model& model, const std::vector<std::string>& paths, const std::string& config_path) {
  auto modules = model.named_modules("", /*include_self=*/false);
  auto parameters = model.named_parameters();
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    if (auto* module = modules.find(path)) {
      for (auto& parameter : (*module)->parameters()) parameter.set_requires_grad(false);
      model.frozen_.push_back(*module);
    } else if (auto* parameter = parameters.find(path)) {
      parameter->set_requires_grad(false);
    } else {
      std::optional<std::string> near = nearest(path, all_paths(model));
      throw ConfigError(
          fmt::format("{}[{}]", config_path, i), "",
          fmt::format("the model has no module or parameter \"{}\"; {}top-level modules: {}", path,
                      near ? fmt::format("did you mean \"{}\"? ", *near) : "",
                      fmt::join(top_level_paths(model), ", ")));
    }
  }
  model.train(model.is_training());
}

void unfreeze(Model& model) {
  for (auto& parameter : model.parameters()) parameter.set_requires_grad(true);
  model.frozen_.clear();
  model.train(model.is_training());
}

std::shared_ptr<Model> build_model(const ComponentSpec& spec, const Inputs& input) {
  return std::shared_ptr<Model>(model_registry().create(spec, input).release());
}

}  // namespace kiln::models
