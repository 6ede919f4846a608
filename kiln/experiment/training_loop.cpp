#include "kiln/experiment/training_loop.h"

#include <fmt/format.h>

#include <filesystem>

namespace kiln::experiment {
namespace {

std::vector<FrozenOpener>& frozen_openers() {
  static std::vector<FrozenOpener> openers;
  return openers;
}

// An export as a registered opener reads it; else a run, opened as evaluation opens it (its EMA's
// weights when it kept one).
engine::FrozenModel open_model_at(const std::string& location, const std::string& which,
                                  torch::Device device) {
  for (const FrozenOpener& opener : frozen_openers())
    if (std::optional<engine::FrozenModel> opened = opener(location, device)) return *opened;
  if (!is_checkpoint_directory(location) && !std::filesystem::exists(location + "/config.yaml"))
    throw Error(location +
                ": neither a run folder, one of its checkpoints, nor an export (a version folder "
                "holding model.yaml, or a model's folder of numbered versions)");
  OpenedModel opened = open_model(location, which, device);
  if (opened.inputs.size() != 1)
    throw Error(location + " takes several inputs; a teacher takes the training data's one");
  return {opened.model, opened.inputs.front().shape};
}

// The model at `location`, frozen: no gradients, eval mode.
engine::FrozenModel open_frozen(const std::string& location, const std::string& which,
                                const std::string& config_path, torch::Device device) {
  engine::FrozenModel frozen;
  try {
    frozen = open_model_at(location, which, device);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    throw ConfigError(config_path, "", e.what());
  }
  for (torch::Tensor& parameter : frozen.model->parameters()) parameter.set_requires_grad(false);
  frozen.model->eval();
  return frozen;
}

// What the loop and the rest of the config must agree on: examples without labels only for a
// loop that learns from them, and no callback whose checkpoint file is the loop's.
void check_loop_fits(const engine::Loop& loop, const ExperimentConfig& config) {
  const data::DataOptions& data = config.data;
  bool unlabelled = data.labels_per_class > 0 && data.labelled_share < 1;
  if (unlabelled && !loop.takes_unlabelled())
    throw ConfigError("data.labels_per_class", "",
                      fmt::format("leaves examples unlabelled, which the {} loop cannot train on: "
                                  "use loop: mean_teacher, or data.labelled_share: 1 to train on "
                                  "the labelled examples alone",
                                  loop.type));
  if (!unlabelled && loop.takes_unlabelled())
    throw ConfigError(loop.config_path, "",
                      fmt::format("the {} loop learns from unlabelled examples, and every example "
                                  "has its label: set data.labels_per_class (with "
                                  "data.labelled_share below 1)",
                                  loop.type));
  for (const ComponentSpec& callback : config.callbacks.items)
    if (callback.type() == loop.tensor_file() && loop.tensor_file() != loop.type)
      throw ConfigError(callback.path, "",
                        fmt::format("the {} loop keeps a moving average of the weights already "
                                    "(its checkpoint file {}.safetensors); remove this callback",
                                    loop.type, loop.tensor_file()));
}

}  // namespace

bool register_frozen_opener(FrozenOpener opener) {
  frozen_openers().push_back(std::move(opener));
  return true;
}

LoopCarry loop_carry(const engine::Loop& loop) { return {loop.type, loop.state(), loop.tensors()}; }

void take_up(engine::Loop& loop, const std::optional<LoopCarry>& carried) {
  if (!carried || carried->type != loop.type) return;
  loop.load_state(carried->state, "the stage before");
  if (!carried->tensors.empty()) loop.load_tensors(carried->tensors);
}

std::unique_ptr<engine::Loop> build_loop(Experiment& experiment, models::Model& model,
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
  check_loop_fits(*loop, experiment.config());
  engine::LoopSetup setup{model, device, shape,
                          [&experiment] { return experiment.build_model("train"); }, opener};
  loop->attach(setup);
  return loop;
}

}  // namespace kiln::experiment
