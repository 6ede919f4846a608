#include "kiln/serving/answer_queue.h"

#include <fmt/format.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kiln/core/error.h"

namespace kiln::serving {

AnswerQueue::AnswerQueue() : wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (wake_fd_ < 0) throw Error(fmt::format("kiln serve: eventfd: {}", std::strerror(errno)));
}

AnswerQueue::~AnswerQueue() { close(wake_fd_); }

void AnswerQueue::set_loop_thread(std::thread::id loop) {
  std::lock_guard<std::mutex> lock(mutex_);
  loop_thread_ = loop;
}

void AnswerQueue::push(uint64_t connection, HttpAnswer answer) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.emplace_back(connection, std::move(answer));
    // The loop takes the queue after each round of events, so an answer given on its own
    // thread needs no wake-up, and others one per round.
    wake = std::this_thread::get_id() != loop_thread_ && !woken_;
    woken_ = woken_ || wake;
  }
  if (wake) this->wake();
}

void AnswerQueue::wake() {
  uint64_t one = 1;
  ssize_t written = write(wake_fd_, &one, sizeof one);
  (void)written;  // fails only when the counter is full: the loop is awake anyway
}

std::vector<std::pair<uint64_t, HttpAnswer>> AnswerQueue::take() {
  uint64_t count = 0;
  ssize_t got = read(wake_fd_, &count, sizeof count);  // clears the wake-up, if any
  (void)got;
  std::vector<std::pair<uint64_t, HttpAnswer>> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  woken_ = false;
  taken.swap(pending_);
  return taken;
}

}  // namespace kiln::serving
