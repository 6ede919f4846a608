#include "kiln/board/http_listener.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "kiln/core/error.h"

namespace kiln::board {

HttpListener::HttpListener() : server_(std::make_unique<httplib::Server>()) {
  server_->set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
}

HttpListener::~HttpListener() = default;

int HttpListener::bind(const std::string& host, int port) {
  int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0)
    throw UsageError(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                    "machine); choose another with --port or --host",
                    host, port));
  return bound;
}

void HttpListener::serve() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_asked_) return;
    phase_ = Phase::kServing;
  }
  server_->listen_after_bind();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = Phase::kEnded;
  }
  ended_.notify_all();
}

void HttpListener::stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_asked_ = true;
  // httplib ignores stop() until its accept loop runs, a moment after serve() says it is
  // serving: ask again until serve() has returned.
  while (phase_ == Phase::kServing) {
    lock.unlock();
    server_->stop();
    lock.lock();
    ended_.wait_for(lock, std::chrono::milliseconds(10),
                    [this] { return phase_ == Phase::kEnded; });
  }
}

}  // namespace kiln::board
