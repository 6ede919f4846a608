#include "kiln/serving/version_watcher.h"

#include <fmt/format.h>

#include "kiln/serving/version_folders.h"

namespace kiln::serving {

VersionWatcher::VersionWatcher(std::vector<ServedModel> models, ModelTable& table, Loader loader,
                               Log log)
    : table_(table), loader_(std::move(loader)), log_(std::move(log)) {
  for (auto& model : models) models_.push_back({std::move(model), {}, {}});
}

void VersionWatcher::poll() {
  for (Watched& model : models_) poll(model);
}

void VersionWatcher::poll(Watched& model) {
  const ServedModel& config = model.config;
  std::vector<int64_t> on_disk = list_versions(config.base_path);
  Versions next;
  bool changed = false;
  auto already_loaded = [&](int64_t version) -> std::shared_ptr<Servable> {
    for (const Versions* versions : {&next, &model.loaded}) {
      auto found = versions->find(version);
      if (found != versions->end()) return found->second;
    }
    return nullptr;
  };
  // A version that fails to load is passed over for the next one the policy would take (the
  // latest that loads), so choose again until every chosen version has loaded.
  for (bool refused_one = true; refused_one;) {
    refused_one = false;
    std::vector<int64_t> candidates;
    for (int64_t version : on_disk)
      if (!model.refused.count(version)) candidates.push_back(version);
    Versions chosen;
    for (int64_t version : versions_to_serve(config.policy, candidates)) {
      if (std::shared_ptr<Servable> held = already_loaded(version)) {
        chosen[version] = held;
        continue;
      }
      std::string directory = fmt::format("{}/{}", config.base_path, version);
      try {
        chosen[version] = loader_(config.name, directory);
        changed = true;
        log_(fmt::format("model {}: serving version {} ({})", config.name, version, directory));
      } catch (const std::exception& e) {
        model.refused.insert(version);
        refused_one = true;
        log_(fmt::format("model {}: version {} not loaded: {}", config.name, version, e.what()));
      }
    }
    next = chosen;
  }
  for (const auto& [version, servable] : model.loaded)
    if (!next.count(version)) {
      changed = true;
      log_(fmt::format("model {}: version {} retired", config.name, version));
    }
  if (!changed && !model.loaded.empty()) return;
  model.loaded = next;
  std::map<std::string, int64_t> labels;
  for (const auto& [label, version] : config.labels)
    if (next.count(version)) labels[label] = version;
  table_.set(config.name, next, labels);
}

}  // namespace kiln::serving
