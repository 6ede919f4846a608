#pragma once
// An HTTP/1.1 server on one thread with epoll: it accepts connections, reads their requests
// (http_request_parser.h), hands each whole request to a handler and writes the answer the
// handler gives, from any thread and whenever it is ready, back on its connection. One request
// per connection is with the handler at a time; keep-alive, pipelined requests, `Expect:
// 100-continue` and chunked bodies are understood. A client that stops sending in the middle of
// a request is answered 400 saying so after the read timeout; one that never sends is dropped.
//
// Why not a thread per connection (cpp-httplib, as `kiln board` uses): a model server answers
// thousands of small requests a second, and each one then costs its thread two sleeps and
// wake-ups (waiting for the request, waiting for its batch), about three context switches a
// request measured with perf; here a batch's worth of requests is read and answered in one
// wake-up of one thread (docs/benchmarks.md, Serving).
// Thread-safety: serve() blocks its thread; stop() may be called from any other; an HttpRespond
// from any thread, once.

#include <functional>
#include <memory>
#include <string>

#include "kiln/net/http_request_parser.h"

namespace kiln::net {

struct HttpAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Released on the loop's thread once the answer is on its way (see RestHandler's HttpReply).
  std::shared_ptr<const void> hold;
};

/// Gives a request its answer; callable once, from any thread, also after the connection has
/// gone (the answer is then dropped).
using HttpRespond = std::function<void(HttpAnswer answer)>;
/// Called on the loop's thread for each whole request; must not block: work that waits answers
/// later through `respond`.
using HttpHandler = std::function<void(HttpRequest& request, HttpRespond respond)>;

struct HttpLoopOptions {
  HttpLimits limits;
  int read_timeout_seconds = 10;  // a client that sends nothing for this long is dropped
  // A request must arrive whole this long after its first byte, however slowly its bytes come
  // (one a second kept a connection forever): answered 408 past it.
  int request_timeout_seconds = 30;
  int max_connections = 4096;  // more are closed as they come (and kept under the fd limit)
  // Bytes of requests still arriving that all connections together may have the loop hold: past
  // it a connection's further bytes are refused (413) rather than kept.
  size_t max_pending_bytes = size_t(256) << 20;
  std::function<void(const std::string&)> log;  // what no client is told (a body cut short)
};

class HttpEventLoop {
 public:
  HttpEventLoop(HttpHandler handler, HttpLoopOptions options);
  ~HttpEventLoop();
  HttpEventLoop(const HttpEventLoop&) = delete;
  HttpEventLoop& operator=(const HttpEventLoop&) = delete;

  /// Binds `host`:`port` (0: any free port) and returns the port; UsageError when it cannot.
  int bind(const std::string& host, int port);
  /// Answers requests until stop(); returns at once when stop() came first. Answers that are
  /// ready when it stops are still sent.
  void serve();
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun).
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::net
