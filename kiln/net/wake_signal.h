#pragma once
// How an event loop is woken from other threads: an eventfd its epoll watches. A thread that
// hands a loop many answers in a row (a batch thread answering each request of a batch) can hold
// the wake-ups back with a DeferredWakes: each loop is then woken once, when the batch is
// answered, and reads all of its answers in one round instead of the first alone.
// Thread-safety: raise() and clear() from any thread; a DeferredWakes belongs to its thread.

#include <memory>
#include <vector>

namespace kiln::net {

class WakeSignal {
 public:
  WakeSignal();
  ~WakeSignal();
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;
  int fd() const { return fd_; }
  void raise();
  void clear();

 private:
  int fd_;
};

class DeferredWakes {
 public:
  /// From here to the end of the scope, wake-ups asked for on this thread wait (scopes nest).
  DeferredWakes();
  /// Raises each signal held back, once.
  ~DeferredWakes();
  DeferredWakes(const DeferredWakes&) = delete;
  DeferredWakes& operator=(const DeferredWakes&) = delete;

  /// Raises `signal` now, or at the end of this thread's outermost DeferredWakes if there is one.
  static void wake(const std::shared_ptr<WakeSignal>& signal);

 private:
  std::vector<std::shared_ptr<WakeSignal>> held_;
  DeferredWakes* outer_;
};

}  // namespace kiln::net
