#include "kiln/serving/off_loop_workers.h"

#include <algorithm>

#include "kiln/core/peak_memory.h"

namespace kiln::serving {

OffLoopWorkers::OffLoopWorkers(int threads, size_t max_waiting_cost)
    : max_waiting_cost_(max_waiting_cost) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { run(); });
}

OffLoopWorkers::~OffLoopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ending_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void OffLoopWorkers::drop_waiting() {
  std::deque<Waiting> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(waiting_);
    for (const Waiting& waiting : dropped) waiting_cost_ -= waiting.cost;
  }
}

bool OffLoopWorkers::post(size_t cost, std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cost > max_waiting_cost_ - std::min(waiting_cost_, max_waiting_cost_)) return false;
    waiting_cost_ += cost;
    waiting_.push_back({cost, std::move(work)});
  }
  wake_.notify_one();
  return true;
}

size_t OffLoopWorkers::waiting_cost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_cost_;
}

void OffLoopWorkers::run() {
  while (true) {
    Waiting next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return ending_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // ending, and nothing is left to run
      next = std::move(waiting_.front());
      waiting_.pop_front();
    }
    // Counted until run: a body's bytes are held until its request has been taken apart.
    next.work();
    next.work = nullptr;  // what it holds goes before the cost is given back
    bool give_back = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      waiting_cost_ -= next.cost;
      auto now = std::chrono::steady_clock::now();
      if (next.cost >= kGiveBackAfterCost && now - last_give_back_ >= std::chrono::seconds(1)) {
        last_give_back_ = now;
        give_back = true;
      }
    }
    if (give_back) give_back_freed_memory();
  }
}

}  // namespace kiln::serving
