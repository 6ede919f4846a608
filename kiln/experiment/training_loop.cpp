#include "kiln/experiment/training_loop.h"

namespace kiln::experiment {
namespace {

// A teacher run opened as evaluation opens it (its EMA's weights when it kept one), frozen.
engine::FrozenModel open_frozen(const std::string& location, const std::string& which,
                                const std::string& config_path, torch::Device device) {
  OpenedModel opened;
  try {
    opened = open_model(location, which, device);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(config_path, "", e.what());
  }
  if (opened.inputs.size() != 1)
    throw ConfigError(config_path, "",
                      location + " takes several inputs; a teacher takes the training data's one");
  for (torch::Tensor& parameter : opened.model->parameters()) parameter.set_requires_grad(false);
  opened.model->eval();
  return {opened.model, opened.inputs.front().shape};
}

}  // namespace

std::unique_ptr<engine::Loop> build_loop(const Experiment& experiment, models::Model& model,
                                         const std::vector<ModelInput>& inputs) {
  const ComponentSpec& spec = experiment.config().loop;
  std::unique_ptr<engine::Loop> loop = engine::loop_registry().create(spec);
  loop->type = spec.type();
  loop->config_path = spec.path.empty() ? "loop" : spec.path;
  torch::Device device = experiment.device();
  auto opener = [device](const std::string& location, const std::string& which,
                         const std::string& config_path) {
    return open_frozen(location, which, config_path, device);
  };
  std::vector<int64_t> shape = inputs.size() == 1 ? inputs.front().shape : std::vector<int64_t>{};
  engine::LoopSetup setup{model, device, shape, opener};
  loop->attach(setup);
  return loop;
}

}  // namespace kiln::experiment
