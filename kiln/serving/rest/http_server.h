#pragma once
// `kiln serve`'s HTTP side, on its event loop (http_event_loop.h): TensorFlow Serving's REST API
// (rest_handler.h) under /v1/, Prometheus's metrics at /monitoring/prometheus/metrics, /healthz
// for load balancers, limits on request headers and bodies, a read timeout for slow clients, and
// an optional bearer token (asked of everything but /healthz). Binds 127.0.0.1 unless told
// otherwise.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <cstdint>
#include <functional>
#include <string>

#include "kiln/net/http_event_loop.h"
#include "kiln/serving/off_loop_workers.h"
#include "kiln/serving/rest/rest_handler.h"

namespace kiln::serving {

struct HttpOptions {
  int64_t max_body_bytes = 16 << 20;
  int read_timeout_seconds = 10;     // a client that sends nothing for this long is dropped
  int request_timeout_seconds = 30;  // a request arrives whole within this, however it trickles
  std::string token;                 // non-empty: /v1/ requests need `Authorization: Bearer TOKEN`
  int max_connections = 4096;        // open at once; more wait to be accepted
  int64_t max_pending_bytes = int64_t(256) << 20;  // of requests still arriving, all clients
  std::function<void(const std::string&)> log;     // what no client is told (a body cut short)
  int body_readers = 1;  // threads reading bodies too big to read on the loop
};

/// The bearer token in the first line of `path` (--token-file of serve and predict --server).
/// UsageError when it is empty or holds a space or a control character, which no request header
/// could carry.
std::string read_token_file(const std::string& path);

class HttpServer {
 public:
  HttpServer(const RestHandler& handler, HttpOptions options);

  /// Binds `host`:`port` (0: any free port) and returns the port; UsageError when it cannot.
  int bind(const std::string& host, int port) { return loop_.bind(host, port); }
  /// Answers requests until stop(); returns at once when stop() came first.
  void serve() { loop_.serve(); }
  /// Ends serve() and returns once it has ended.
  void stop() { loop_.stop(); }

 private:
  void route(net::HttpRequest& request, const net::HttpRespond& respond) const;
  void answer_api(net::HttpRequest& request, const net::HttpRespond& respond) const;
  bool authorized(const net::HttpRequest& request) const;

  const RestHandler& handler_;
  HttpOptions options_;
  net::HttpEventLoop loop_;
  // After the loop: ended first, reading what waits while the loop can still send its answer.
  mutable OffLoopWorkers readers_;  // of bodies of kMinBodyBytesOffLoop and more
};

}  // namespace kiln::serving
