#pragma once
// An event loop's inbox: answers given on other threads (a batch thread that finished a request),
// each naming its connection by id, since by the time an answer comes its connection may have gone
// and its descriptor been reused. Pushing wakes the loop through an eventfd, at most once a round.
// The HTTP/1.1 loop's answers are HttpAnswers; the gRPC loop's, its calls' answers.
// Thread-safety: push() from any thread; take() and set_loop_thread() from the loop's.

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/net/wake_signal.h"

namespace kiln::net {

template <class Answer>
class Inbox {
 public:
  /// What the loop's epoll watches to be woken.
  int wake_fd() const { return signal_->fd(); }
  void set_loop_thread(std::thread::id loop) {
    std::lock_guard<std::mutex> lock(mutex_);
    loop_thread_ = loop;
  }
  void push(uint64_t connection, Answer answer) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.emplace_back(connection, std::move(answer));
      // The loop takes the inbox after each round of events, so an answer given on its own
      // thread needs no wake-up, and others one per round.
      wake = std::this_thread::get_id() != loop_thread_ && !woken_;
      woken_ = woken_ || wake;
    }
    if (wake) DeferredWakes::wake(signal_);
  }
  /// Wakes the loop (for stop()).
  void wake() { signal_->raise(); }
  /// Every answer pushed since the last take, in order; clears the wake-up.
  std::vector<std::pair<uint64_t, Answer>> take() {
    signal_->clear();
    std::vector<std::pair<uint64_t, Answer>> taken;
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = false;
    taken.swap(pending_);
    return taken;
  }

 private:
  std::shared_ptr<WakeSignal> signal_ = std::make_shared<WakeSignal>();
  std::mutex mutex_;
  std::thread::id loop_thread_;
  bool woken_ = false;
  std::vector<std::pair<uint64_t, Answer>> pending_;
};

}  // namespace kiln::net
