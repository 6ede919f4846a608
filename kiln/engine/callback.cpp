#include "kiln/engine/callback.h"

#include <algorithm>
#include <cmath>

#include "kiln/core/suggest.h"

namespace kiln::engine {

CallbackRegistry& callback_registry() {
  static CallbackRegistry registry(
      "callback", "Optional training behaviour: checkpoints, early stopping, EMA, logging.");
  return registry;
}

namespace {

void copy_into(const NamedTensors& from, models::Model& model) {
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_state(model)) tensor.copy_(from.at(name));
}

}  // namespace

SwappedWeights::SwappedWeights(models::Model& model, const NamedTensors* weights) : model_(model) {
  if (!weights) return;
  for (const auto& [name, tensor] : named_state(model)) saved_[name] = tensor.detach().clone();
  copy_into(*weights, model);
}

SwappedWeights::~SwappedWeights() {
  if (!saved_.empty()) copy_into(saved_, model_);
}

void check_monitor(const std::string& monitor, const std::vector<std::string>& monitorable,
                   const std::string& path) {
  if (std::find(monitorable.begin(), monitorable.end(), monitor) == monitorable.end())
    throw ConfigError(
        path, "",
        "\"" + monitor + "\" is never measured; " + suggestion_text(monitor, monitorable));
}

bool improves(double value, const std::optional<double>& best, Mode mode, double min_delta) {
  if (std::isnan(value)) return false;
  if (!best) return true;
  return mode == Mode::kMax ? value > *best + min_delta : value < *best - min_delta;
}

}  // namespace kiln::engine
