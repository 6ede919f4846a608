#include "kiln/engine/evaluator.h"

#include "kiln/data/dtype_names.h"
#include "kiln/data/partly_labelled.h"
#include "kiln/engine/train_state.h"

namespace kiln::engine {

data::Batch on_device(const data::Batch& batch, torch::Device device) {
  data::Batch moved = batch;
  moved.input = batch.input.to(device);
  moved.target = batch.target.to(device);
  for (auto& [name, values] : moved.targets) values = values.to(device);
  // The host copies stay for the losses' checks of the targets (data::Batch::host_target).
  if (!batch.host_target.defined() && batch.target.defined() && batch.target.is_cpu() &&
      !device.is_cpu()) {
    moved.host_target = batch.target;
    moved.host_targets = batch.targets;
  }
  moved.arrive = nullptr;
  return moved;
}

MetricValues evaluate(models::Model& model, data::Loader& loader, Objective& objective,
                      torch::Device device, const std::string& split, int64_t max_batches,
                      int64_t* examples, distributed::Context* context) {
  torch::NoGradGuard no_grad;
  bool was_training = model.is_training();
  model.eval();
  objective.reset();
  loader.start_epoch(0);
  for (int64_t taken = 0; max_batches == 0 || taken < max_batches; ++taken) {
    std::optional<data::Batch> batch = loader.next();
    if (!batch) break;
    if (batch->size() == 0) continue;  // every row refused (on_corrupt: skip)
    objective.compute(model, on_device(*batch, device));
    if (examples) *examples += batch->size();
  }
  model.train(was_training);
  if (context) combine_over_ranks(objective, *context);
  return objective.values(split);
}

namespace {

// Floating-point inputs of another precision than the weights fail deep inside LibTorch ("expected
// scalar type Double but found Float"): say which setting makes them.
void check_input_dtype(models::Model& model, const torch::Tensor& input) {
  std::vector<torch::Tensor> parameters = model.parameters();
  if (!input.is_floating_point() || parameters.empty()) return;
  torch::Dtype weights = parameters.front().scalar_type();
  if (input.scalar_type() == weights) return;
  throw ConfigError("data.transforms.train", "",
                    fmt::format("the transforms deliver {} inputs, but the model's weights are "
                                "{}; cast them to {}",
                                data::dtype_name(input.scalar_type()), data::dtype_name(weights),
                                data::dtype_name(weights)));
}

}  // namespace

void probe_objective(models::Model& model, data::Loader& loader, Objective& objective,
                     torch::Device device) {
  Json rng = capture_rng();
  data::LoaderPosition position = loader.position();
  bool was_training = model.is_training();
  auto restore = [&] {
    model.train(was_training);
    objective.reset();
    loader.seek(position);
    restore_rng(rng, "(the random generators' state before the check)");
  };
  try {
    torch::NoGradGuard no_grad;
    model.eval();
    loader.start_epoch(0);
    std::optional<data::Batch> batch = loader.next();
    if (batch && batch->size() > 0) {
      check_input_dtype(model, batch->input);
      objective.compute(model,
                        data::labelled_rows(on_device(*batch, device), loader.dataset().info()));
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

}  // namespace kiln::engine
