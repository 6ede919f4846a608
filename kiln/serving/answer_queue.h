#pragma once
// The event loop's inbox: answers given on other threads (a batch thread that finished a request),
// each naming its connection by id, since by the time an answer comes its connection may have gone
// and its descriptor been reused. Pushing wakes the loop through an eventfd, at most once a round.
// Thread-safety: push() from any thread; take() and set_loop_thread() from the loop's.

#include <cstdint>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "kiln/serving/http_event_loop.h"

namespace kiln::serving {

class AnswerQueue {
 public:
  AnswerQueue();
  ~AnswerQueue();
  AnswerQueue(const AnswerQueue&) = delete;
  AnswerQueue& operator=(const AnswerQueue&) = delete;

  /// What the loop's epoll watches to be woken.
  int wake_fd() const { return wake_fd_; }
  void set_loop_thread(std::thread::id loop);
  void push(uint64_t connection, HttpAnswer answer);
  /// Wakes the loop (for stop()).
  void wake();
  /// Every answer pushed since the last take, in order; clears the wake-up.
  std::vector<std::pair<uint64_t, HttpAnswer>> take();

 private:
  int wake_fd_;
  std::mutex mutex_;
  std::thread::id loop_thread_;
  bool woken_ = false;
  std::vector<std::pair<uint64_t, HttpAnswer>> pending_;
};

}  // namespace kiln::serving
