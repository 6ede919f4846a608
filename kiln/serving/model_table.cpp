#include "kiln/serving/model_table.h"

#include <fmt/format.h>

#include <mutex>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

ServingError not_found(const std::string& message) {
  return ServingError(StatusCode::kNotFound, message);
}

// How TensorFlow Serving names the version a request asked for.
std::string requested(const Route& route) {
  if (route.label) return fmt::format("Specific({}, {})", route.model, *route.label);
  if (route.version) return fmt::format("Specific({}, {})", route.model, *route.version);
  return fmt::format("Latest({})", route.model);
}

}  // namespace

void ModelTable::set(const std::string& model, Versions versions,
                     std::map<std::string, int64_t> labels) {
  std::unique_lock lock(mutex_);
  if (versions.empty()) {
    models_.erase(model);
    return;
  }
  models_[model] = Model{std::move(versions), std::move(labels)};
}

FoundVersion ModelTable::find(const Route& route) const {
  std::shared_lock lock(mutex_);
  auto model = models_.find(route.model);
  // TF Serving's ServerCore looks a label up before the servable, and answers one it does not know
  // (also of a model it does not serve) as the caller's bad argument, not as a missing servable.
  if (route.label && (model == models_.end() || !model->second.labels.count(*route.label)))
    throw ServingError(StatusCode::kInvalidArgument,
                       fmt::format("Unrecognized servable version label: {}", *route.label));
  if (model == models_.end())
    throw not_found("Servable not found for request: " + requested(route));
  int64_t version = model->second.versions.rbegin()->first;
  if (route.label) {
    version = model->second.labels.at(*route.label);
  } else if (route.version) {
    version = *route.version;
  }
  auto found = model->second.versions.find(version);
  if (found == model->second.versions.end())
    throw not_found("Servable not found for request: " + requested(route));
  return {version, found->second};
}

// As TF Serving's GetModelStatus, on both APIs: a version label is not looked at, so a request
// with one is told of every version.
std::vector<int64_t> ModelTable::status_versions(const Route& route) const {
  std::shared_lock lock(mutex_);
  auto model = models_.find(route.model);
  if (route.version) {
    if (model == models_.end() || !model->second.versions.count(*route.version))
      throw not_found(
          fmt::format("Could not find version {} of model {}", *route.version, route.model));
    return {*route.version};
  }
  if (model == models_.end())
    throw not_found(fmt::format("Could not find any versions of model {}", route.model));
  std::vector<int64_t> versions;
  for (const auto& [version, servable] : model->second.versions) versions.push_back(version);
  return {versions.rbegin(), versions.rend()};
}

bool ModelTable::serves(const std::string& model) const {
  std::shared_lock lock(mutex_);
  return models_.count(model) > 0;
}

std::map<std::string, size_t> ModelTable::models() const {
  std::shared_lock lock(mutex_);
  std::map<std::string, size_t> counts;
  for (const auto& [name, model] : models_) counts[name] = model.versions.size();
  return counts;
}

}  // namespace kiln::serving
