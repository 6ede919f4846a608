#pragma once
// kiln's gRPC server's network side: one thread with epoll that accepts connections on a listening
// socket, runs each one's HTTP/2 (grpc_connection.h), hands every call received whole to a handler
// and sends the answer the handler gives, from any thread and whenever it is ready, back on its
// stream. As the HTTP/1.1 loop (http_event_loop.h) does, a batch's worth of calls is read and
// answered in one wake-up of one thread; several loops may share one listening socket, each
// taking the connections it accepts first (`kiln serve --grpc-threads`).
// Thread-safety: serve() blocks its thread; shut_down() and stop() may be called from any other;
// a GrpcReply from any thread, once.

#include <atomic>
#include <functional>
#include <memory>

#include "kiln/net/grpc_connection.h"

namespace kiln::net {

/// Answers a call, once, from any thread, also after its connection has gone (the answer is
/// then dropped). `hold` is released on the loop's thread once the answer is taken.
using GrpcReply = std::function<void(GrpcOutgoing outgoing, std::shared_ptr<const void> hold)>;
/// Called on the loop's thread for each call; must not block: work that waits answers later.
using GrpcHandler = std::function<void(GrpcIncoming& call, GrpcReply reply)>;

/// The connections that the loops sharing a port hold together, against one cap.
struct ConnectionCount {
  std::atomic<size_t> open{0};
};

struct GrpcLoopOptions {
  GrpcLimits limits;
  // Open at once over every loop sharing `shared_count` (kept under the fd limit): more are
  // closed as they come, so that a client learns at once rather than waiting in the listen queue.
  int max_connections = 4096;
  std::shared_ptr<ConnectionCount> shared_count;  // none: this loop's own
  // A client that sends nothing for this long, with no call of its own being answered, is
  // dropped; a call whose request is still arriving is answered DEADLINE_EXCEEDED first.
  int read_timeout_seconds = 10;
  // A call's request must arrive whole this long after it began, however its bytes trickle in;
  // a connection without calls must begin one within read_timeout_seconds (pings don't count).
  int request_timeout_seconds = 30;
};

class GrpcEventLoop {
 public:
  /// Serves `listen_fd` (a listening socket, non-blocking, that the caller keeps open).
  GrpcEventLoop(int listen_fd, GrpcHandler handler, GrpcLoopOptions options);
  ~GrpcEventLoop();
  GrpcEventLoop(const GrpcEventLoop&) = delete;
  GrpcEventLoop& operator=(const GrpcEventLoop&) = delete;

  /// Answers calls until stop(); returns at once when stop() came first.
  void serve();
  /// Takes no more connections and tells each client to open no more calls (GOAWAY); the calls
  /// received are still answered.
  void shut_down();
  /// Ends serve() once what is ready has gone out (a few seconds at most), and returns when it
  /// has ended (at once when serve() has not begun).
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::net
