#pragma once
// The requests a server is answering, counted across its APIs (REST and gRPC alike), so that a
// shutdown can drain: from drain() on every new request is refused (answered "unavailable") while
// those already let in run to their answer.
// Thread-safety: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kiln::serving {

class RequestGate {
 public:
  RequestGate() = default;
  RequestGate(const RequestGate&) = delete;
  RequestGate& operator=(const RequestGate&) = delete;
  /// Waits until every request let in has left.
  ~RequestGate() { wait_until_idle(); }

  /// Lets a request in (true) unless the gate is draining (false); each true needs one leave().
  bool enter();
  /// A request let in has been answered.
  void leave();
  /// Refuses requests from now on; returns once none is in flight, or after `timeout`, with how
  /// many were left.
  int64_t drain(std::chrono::milliseconds timeout);
  /// Returns once no request is in flight.
  void wait_until_idle();
  /// Requests being answered now.
  int64_t in_flight() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable idle_;
  int64_t in_flight_ = 0;
  bool draining_ = false;
};

}  // namespace kiln::serving
