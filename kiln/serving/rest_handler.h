#pragma once
// TensorFlow Serving's REST API over a ModelTable, without the sockets (http_server.h carries it):
// model status, model metadata and predict in row and columnar form. Every failure is a reply of
// {"error": MESSAGE} with the HTTP status TensorFlow Serving gives it; nothing a client sends
// makes handle() throw.
// Thread-safety: handle() may be called from several threads at once.

#include <cstdint>
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

 private:
  HttpReply answer(const std::string& method, const std::string& path, const std::string& body,
                   Route& route) const;
  std::string predict(const Route& route, const std::string& body) const;

  const ModelTable& table_;
  RestOptions options_;
  ServingMetrics* metrics_;
};

}  // namespace kiln::serving
