#pragma once
// The life of the cpp-httplib server that carries `kiln board`: bound to an address (a port of
// its own: address reuse after a restart, never httplib's SO_REUSEPORT, with which a second
// server on the same port would share the requests in silence), answering on one thread until
// stopped from another. (`kiln serve` has its own server: serving/http_event_loop.)
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
}

namespace kiln::board {

class HttpListener {
 public:
  HttpListener();
  ~HttpListener();

  /// The server, to add routes and settings to before serve().
  httplib::Server& server() { return *server_; }
  /// Binds `host`:`port` (0: any free port) and returns the port; UsageError when it cannot.
  int bind(const std::string& host, int port);
  /// Answers requests until stop(); returns at once when stop() came first.
  void serve();
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun).
  void stop();

 private:
  std::unique_ptr<httplib::Server> server_;
  std::mutex mutex_;
  std::condition_variable ended_;
  enum class Phase { kIdle, kServing, kEnded } phase_ = Phase::kIdle;
  bool stop_asked_ = false;
};

}  // namespace kiln::board
