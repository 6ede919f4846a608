#pragma once
// Evaluation over a whole split: the mean loss and every metric (of every head), computed exactly
// from summed statistics whatever the batch size. Runs without gradients, in eval mode.
// Thread-safety: one thread.

#include <string>

#include "kiln/data/loader.h"
#include "kiln/engine/objective.h"

namespace kiln::engine {

/// The batch on `device`, named targets included.
data::Batch on_device(const data::Batch& batch, torch::Device device);

/// Evaluates `model` on every batch of `loader` (the first `max_batches` when > 0) with
/// `objective` (reset first), tagged `split`; counts the examples into `examples` when given.
/// With a `context`, each process evaluates its share and the values cover all of them.
MetricValues evaluate(models::Model& model, data::Loader& loader, Objective& objective,
                      torch::Device device, const std::string& split, int64_t max_batches = 0,
                      int64_t* examples = nullptr, distributed::Context* context = nullptr);

/// Measures `model`'s outputs on the first batch of `loader` with `objective`, then forgets them:
/// a loss or metric that does not fit the outputs fails here (a ConfigError at its path) rather
/// than at the first step. The model's mode, the loader's position and LibTorch's random
/// generators are left as they were, so a run checked first trains as one that was not.
void probe_objective(models::Model& model, data::Loader& loader, Objective& objective,
                     torch::Device device);

}  // namespace kiln::engine
