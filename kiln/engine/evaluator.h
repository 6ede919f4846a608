#pragma once
// Evaluation over a whole split: the mean loss and every metric, computed exactly from summed
// statistics whatever the batch size. Runs without gradients, in eval mode.
// Thread-safety: one thread.

#include <map>
#include <string>
#include <vector>

#include "kiln/data/loader.h"
#include "kiln/engine/experiment.h"

namespace kiln::engine {

/// Tagged values, e.g. {"val/accuracy": 0.91, "val/loss": 0.25}.
using MetricValues = std::map<std::string, double>;

MetricValues evaluate(models::Model& model, data::Loader& loader, const losses::Loss& loss,
                      std::vector<NamedMetric>& metrics, torch::Device device,
                      const std::string& split);

}  // namespace kiln::engine
