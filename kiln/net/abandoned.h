#pragma once
// A call's mark that its client no longer waits for the answer: the transport sets it when the
// client resets the call's stream, lets its deadline pass or closes its connection, and whoever
// holds the call's work (serving/batcher.h) drops it rather than run a model for no one. A reset
// client that calls again at once otherwise queues a second copy of the same work behind the
// first, and a flood of such calls keeps the model busy long after the clients have gone.
// Thread-safety: set on the transport's thread, read from any.

#include <atomic>
#include <memory>

namespace kiln::net {

/// Read-only view of the mark; null for a call that no transport watches (a test's, a local one).
using Abandoned = std::shared_ptr<const std::atomic<bool>>;

/// The transport's side of the mark.
class AbandonMark {
 public:
  /// The view given out with the call.
  Abandoned view() const { return flag_; }
  /// Marks the call abandoned.
  void set() { flag_->store(true, std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
};

/// Whether `abandoned` is set.
inline bool is_abandoned(const Abandoned& abandoned) {
  return abandoned && abandoned->load(std::memory_order_relaxed);
}

}  // namespace kiln::net
