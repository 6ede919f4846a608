#pragma once
// `kiln serve` as one object: the model table, the version watcher that loads and retires versions
// (hot reload) on a thread of its own, the metrics, and the listeners that are its ways in (REST,
// gRPC: listener.h), each on a thread of its own, answering from the same table. It names no
// protocol: the caller gives the listeners. Stopping drains every API at once: requests that come
// then are refused (503, UNAVAILABLE), those in flight are answered first. Torch-free: what a
// version is (a kiln export, behind a batcher) is the caller's `load`.
// Thread-safety: construct, start and stop on one thread; requests come on the server's.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/serving/listener.h"
#include "kiln/serving/metrics.h"
#include "kiln/serving/model_config.h"
#include "kiln/serving/model_table.h"
#include "kiln/serving/request_gate.h"
#include "kiln/serving/servable.h"
#include "kiln/serving/version_watcher.h"

namespace kiln::serving {

struct ModelServerOptions {
  std::vector<ServedModel> models;
  double poll_seconds = 1;
  /// Versions loaded, retired and refused, the drain, and what the listeners tell no client.
  std::function<void(const std::string&)> log;
  /// The batchers' budget for requests' inputs (held_bytes.h), which every API also checks
  /// before it reads a request; none: unbounded.
  std::shared_ptr<HeldBytes> held;
  /// The ways in (rest/rest_listener.h, grpc/grpc_front.h), made in this order once the models
  /// are loaded.
  std::vector<ListenerFactory> listeners;
};

class ModelServer {
 public:
  /// A version folder of `model` loaded as a servable; it reports its batches to `metrics`.
  using LoadVersion = std::function<std::shared_ptr<Servable>(
      const std::string& model, const std::string& directory, ServingMetrics& metrics)>;

  /// Loads every model's versions and makes the listeners. A model whose folder is missing or holds
  /// no version that loads, or a label on a version not loaded, is a DataError naming the
  /// folder: far more often a typo than a version yet to come.
  ModelServer(ModelServerOptions options, LoadVersion load);
  /// Stops, as stop() does, when still serving.
  ~ModelServer();

  /// The port the listener `index` (in the options' order) bound, the one picked for port 0.
  int port(size_t index = 0) const { return listeners_.at(index)->port(); }
  /// Where each listener listens ("http://HOST:PORT", "grpc://HOST:PORT").
  std::vector<std::string> listener_addresses() const;
  /// Each model served, with its number of versions.
  std::map<std::string, size_t> models() const { return table_.models(); }

  /// Answers requests and watches the folders, each on a thread of its own, until stop().
  void start();
  /// Stops watching, answers the requests in flight (waiting `drain` at most), then stops the
  /// server; returns how many were left unanswered.
  int64_t stop(std::chrono::milliseconds drain);

 private:
  void check_every_model_serves() const;
  void poll_until_stopped();

  ModelServerOptions options_;
  ServingMetrics metrics_;  // before the table: its versions' batchers report here
  ModelTable table_;
  VersionWatcher watcher_;
  RequestGate gate_;  // before the APIs, which wait on it for their requests in flight
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread polling_;
  std::vector<std::thread> listening_;
};

}  // namespace kiln::serving
