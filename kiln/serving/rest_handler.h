#pragma once
// TensorFlow Serving's REST API over a ModelTable, without the sockets (http_server.h carries it):
// model status, model metadata and predict in row and columnar form. Every failure is a reply of
// {"error": MESSAGE} with the HTTP status TensorFlow Serving gives it; nothing a client sends
// makes handle() throw.
// Thread-safety: handle() may be called from several threads at once.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

#include "kiln/serving/metrics.h"
#include "kiln/serving/model_table.h"

namespace kiln::serving {

struct HttpReply {
  int status = 200;
  std::string body;
};

struct RestOptions {
  int64_t max_rows = 1024;  // examples in one predict request
};

class RestHandler {
 public:
  /// Counts every request into `metrics` when given.
  RestHandler(const ModelTable& table, RestOptions options, ServingMetrics* metrics = nullptr)
      : table_(table), options_(options), metrics_(metrics) {}

  /// The reply to `method` `path` with `body`.
  HttpReply handle(const std::string& method, const std::string& path,
                   const std::string& body) const;
  /// Prometheus's text of the metrics ("" without them).
  std::string metrics_text() const;

  /// Draining for a shutdown: requests that arrive from now on are answered 503 while those in
  /// flight run on; returns once none is left, or after `timeout`, with how many were left.
  int64_t drain(std::chrono::milliseconds timeout);
  /// Requests being answered now.
  int64_t in_flight() const;

 private:
  HttpReply answer(const std::string& method, const std::string& path, const std::string& body,
                   Route& route) const;
  std::string predict(const Route& route, const std::string& body) const;

  const ModelTable& table_;
  RestOptions options_;
  ServingMetrics* metrics_;
  mutable std::mutex mutex_;
  mutable std::condition_variable idle_;
  mutable int64_t in_flight_ = 0;
  bool draining_ = false;
};

}  // namespace kiln::serving
