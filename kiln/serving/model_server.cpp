#include "kiln/serving/model_server.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "kiln/core/error.h"

namespace kiln::serving {

ModelServer::ModelServer(ModelServerOptions options, LoadVersion load)
    : options_(std::move(options)),
      watcher_(
          options_.models, table_,
          [this, load = std::move(load)](const std::string& model, const std::string& directory) {
            return load(model, directory, metrics_);
          },
          options_.log) {
  watcher_.poll();
  check_every_model_serves();
  for (const ListenerFactory& make : options_.listeners)
    listeners_.push_back(
        make(ServingParts{table_, gate_, metrics_, options_.held.get(), options_.log}));
}

std::vector<std::string> ModelServer::listener_addresses() const {
  std::vector<std::string> addresses;
  for (const auto& listener : listeners_) addresses.push_back(listener->address());
  return addresses;
}

ModelServer::~ModelServer() {
  if (polling_.joinable()) stop(std::chrono::seconds(30));
}

void ModelServer::check_every_model_serves() const {
  std::map<std::string, size_t> served = table_.models();
  for (const ServedModel& model : options_.models) {
    std::error_code error;
    if (!std::filesystem::is_directory(model.base_path, error))
      throw DataError(
          model.base_path, -1, -1,
          fmt::format("model {}: no such folder (the base path of its versions)", model.name));
    if (!served.count(model.name))
      throw DataError(model.base_path, -1, -1,
                      fmt::format("model {}: no version loaded from this folder (a version is a "
                                  "numbered folder an export wrote; see above for any refused)",
                                  model.name));
    Route all;
    all.model = model.name;
    std::vector<int64_t> loaded = table_.status_versions(all);
    for (const auto& [label, version] : model.labels)
      if (std::find(loaded.begin(), loaded.end(), version) == loaded.end())
        throw DataError(model.base_path, -1, -1,
                        fmt::format("model {}: label \"{}\" names version {}, which is not loaded "
                                    "(loaded: {})",
                                    model.name, label, version, fmt::join(loaded, ", ")));
  }
}

void ModelServer::start() {
  for (const auto& listener : listeners_)
    listening_.emplace_back([&listener] { listener->serve(); });
  polling_ = std::thread([this] { poll_until_stopped(); });
}

void ModelServer::poll_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  auto period = std::chrono::duration<double>(options_.poll_seconds);
  while (!wake_.wait_for(lock, period, [this] { return stopping_; })) watcher_.poll();
}

int64_t ModelServer::stop(std::chrono::milliseconds drain) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (polling_.joinable()) polling_.join();
  auto say = [this](const std::string& line) {
    if (options_.log) options_.log(line);
  };
  say(fmt::format("stopping: draining {} request(s) in flight", gate_.in_flight()));
  int64_t left = gate_.drain(drain);
  if (left > 0)
    say(fmt::format("stopped with {} request(s) unanswered after {} s", left,
                    std::chrono::duration_cast<std::chrono::seconds>(drain).count()));
  for (const auto& listener : listeners_) listener->stop();
  for (std::thread& thread : listening_) thread.join();
  listening_.clear();
  return left;
}

}  // namespace kiln::serving
