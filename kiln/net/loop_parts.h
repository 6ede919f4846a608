#pragma once
// What kiln's two epoll servers (the HTTP/1.1 loop and the gRPC one) share besides their sockets
// (tcp_listen.h): an epoll instance whose events carry a 64-bit tag, the turn each loop takes
// (wait, accept, read and write, deliver the answers given on other threads, scan the timeouts),
// and the serve()/stop() handshake of a loop that runs on a thread of its own.
// Thread-safety: an Epoll belongs to its loop's thread; LoopPhase::serve() runs on the loop's
// thread and stop() on any other.

#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/core/peak_memory.h"

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

/// The tags of a loop's epoll events: its listening socket, its wake-up, then its connections.
constexpr uint64_t kListenerTag = 0, kWakeTag = 1, kFirstConnectionTag = 2;

/// How often a turn takes its inbox of answers at most. Taken until it was empty, a flood of
/// answers kept the loop delivering while a status call waited unread behind them (1.3 to
/// 5.7 s); what is left wakes the next turn, after the events that came meanwhile.
constexpr int kInboxTakesPerTurn = 4;

/// The turns of one loop. Each waits up to `wait_ms` for events, accepts connections on the
/// listener's (`loop.accept_all()`), hands each connection's to `loop.on_event(tag, events)`,
/// delivers what other threads answered (`loop.deliver_answers()`), and every `scan_period`
/// checks the connections' timeouts (`loop.scan_timeouts(now)`).
class LoopTurns {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LoopTurns(std::chrono::milliseconds scan_period)
      : scan_period_(scan_period), last_scan_(Clock::now()) {}

  /// How long a turn may wait for events: until the next scan while there are connections,
  /// without end while there are none.
  int wait_ms(bool connections) const {
    return connections ? static_cast<int>(scan_period_.count()) : -1;
  }

  template <class Loop>
  void take(Epoll& epoll, int wait_ms, Loop& loop) {
    int ready = epoll.wait(events_, wait_ms);
    for (int i = 0; i < ready; ++i) {
      uint64_t tag = events_[size_t(i)].data.u64;
      if (tag == kListenerTag)
        loop.accept_all();
      else if (tag != kWakeTag)
        loop.on_event(tag, events_[size_t(i)].events);
    }
    loop.deliver_answers();
    Clock::time_point now = Clock::now();
    if (now - last_scan_ >= scan_period_) {
      loop.scan_timeouts(now);
      last_scan_ = now;
    }
  }

 private:
  std::chrono::milliseconds scan_period_;
  Clock::time_point last_scan_;
  std::vector<epoll_event> events_ = std::vector<epoll_event>(256);
};

/// How read_available() ended: the socket has nothing more now (or the connection's share of the
/// turn is read, or `take` stopped), the client has shut its sending side, or the socket failed.
enum class ReadEnd { kForNow, kEndOfStream, kFailed };

/// Reads what has come on the connection `fd`, in chunks of 64 KiB given to `take(data, size)`,
/// until the socket would block, `take` returns false, or 256 KiB have come: a connection's share
/// of a turn, so that one fast client does not starve the others.
template <class Take>
ReadEnd read_available(int fd, Take take) {
  constexpr size_t kChunk = 64 << 10, kShare = 256 << 10;
  char buffer[kChunk];
  for (size_t round = 0; round < kShare;) {
    ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got > 0) {
      round += size_t(got);
      if (!take(static_cast<const char*>(buffer), size_t(got))) return ReadEnd::kForNow;
      continue;
    }
    if (got == 0) return ReadEnd::kEndOfStream;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadEnd::kForNow;
    return ReadEnd::kFailed;
  }
  return ReadEnd::kForNow;
}

/// How send_pending() ended: all of `out` is sent, the socket takes no more for now, or sending
/// failed (the connection is to be closed).
enum class SendEnd { kAllSent, kWouldBlock, kFailed };

/// Sends `out` from `sent` on, advancing `sent`, until all of it is sent, the socket would block
/// or sending fails; never raises SIGPIPE. `last_sent` becomes now when any of it went.
SendEnd send_pending(int fd, const std::string& out, size_t& sent,
                     std::chrono::steady_clock::time_point& last_sent);

/// Gives the memory freed back to the system once what a loop holds of requests still arriving
/// falls back under 1 MiB after 4 MiB or more (core/peak_memory.h says why): 40 clients that
/// stalled in 15 MB bodies and went had left a server at 830 MB while idle. Told what is held at
/// each timeout scan.
class GiveBackAfterPeak {
 public:
  void note(size_t held) {
    peak_ = std::max(peak_, held);
    if (held >= kLow || peak_ < kHigh) return;
    give_back_freed_memory();
    peak_ = 0;
  }

 private:
  static constexpr size_t kHigh = 4 << 20, kLow = 1 << 20;
  size_t peak_ = 0;
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
