#pragma once
// What kiln's two epoll servers (the HTTP/1.1 loop and the gRPC one) share besides their sockets
// (tcp_listen.h): an epoll instance whose events carry a 64-bit tag, and the serve()/stop()
// handshake of a loop that runs on a thread of its own.
// Thread-safety: an Epoll belongs to its loop's thread; LoopPhase::serve() runs on the loop's
// thread and stop() on any other.

#include <sys/epoll.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace kiln::net {

class Epoll {
 public:
  Epoll();  // Error when the system has none to give
  ~Epoll();
  Epoll(const Epoll&) = delete;
  Epoll& operator=(const Epoll&) = delete;

  /// epoll_ctl of `fd` with `tag` as its events' data; Error when it fails (but for a
  /// EPOLL_CTL_DEL, whose descriptor may have gone already).
  void watch(int fd, uint64_t tag, uint32_t events, int operation);
  /// Waits up to `timeout_ms` (-1: without end) and fills `events`; how many are ready (0 when
  /// a signal came first).
  int wait(std::vector<epoll_event>& events, int timeout_ms);

 private:
  int fd_;
};

class LoopPhase {
 public:
  /// Runs `loop` on this thread, unless stop() came first; stop() returns once it has ended,
  /// also by an exception.
  void serve(const std::function<void()>& loop);
  /// Asks the loop to end (stopping() becomes true), calls `wake` so that it sees it, and waits
  /// until it has ended; at once when it has not begun.
  void stop(const std::function<void()>& wake);
  bool stopping() const { return stop_asked_; }

 private:
  void end();

  std::atomic<bool> stop_asked_{false};
  std::mutex mutex_;
  std::condition_variable ended_;
  enum class Phase { kIdle, kServing, kEnded } phase_ = Phase::kIdle;
};

}  // namespace kiln::net
