#pragma once
// `kiln serve`'s HTTP side (cpp-httplib): TensorFlow Serving's REST API (rest_handler.h) under
// /v1/, Prometheus's metrics at /monitoring/prometheus/metrics, /healthz for load balancers, a
// limit on request bodies, a read timeout for slow clients, and an optional bearer token (asked
// of everything but /healthz). Binds 127.0.0.1 unless told otherwise.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <cstdint>
#include <string>

#include "kiln/serving/http_listener.h"
#include "kiln/serving/rest_handler.h"

namespace httplib {
struct Request;
}  // namespace httplib

namespace kiln::serving {

struct HttpOptions {
  int64_t max_body_bytes = 16 << 20;
  int read_timeout_seconds = 10;  // a client that sends nothing for this long is dropped
  std::string token;              // non-empty: /v1/ requests need `Authorization: Bearer TOKEN`
  int threads = 64;               // connections served at once
};

class HttpServer {
 public:
  HttpServer(const RestHandler& handler, HttpOptions options);

  /// Binds `host`:`port` (0: any free port) and returns the port; UsageError when it cannot.
  int bind(const std::string& host, int port) { return listener_.bind(host, port); }
  /// Answers requests until stop(); returns at once when stop() came first.
  void serve() { listener_.serve(); }
  /// Ends serve() and returns once it has ended.
  void stop() { listener_.stop(); }

 private:
  void add_routes();
  bool authorized(const httplib::Request& request) const;

  const RestHandler& handler_;
  HttpOptions options_;
  HttpListener listener_;
};

}  // namespace kiln::serving
