#include "kiln/engine/evaluator.h"

#include "kiln/engine/train_state.h"

namespace kiln::engine {

data::Batch on_device(const data::Batch& batch, torch::Device device) {
  data::Batch moved{batch.input.to(device), batch.target.to(device), {}};
  for (const auto& [name, values] : batch.targets) moved.targets[name] = values.to(device);
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
    objective.compute(model, on_device(*batch, device));
    if (examples) *examples += batch->size();
  }
  model.train(was_training);
  if (context) combine_over_ranks(objective, *context);
  return objective.values(split);
}

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
    if (std::optional<data::Batch> batch = loader.next())
      objective.compute(model, on_device(*batch, device));
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

}  // namespace kiln::engine
