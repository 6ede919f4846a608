#include "kiln/serving/body_readers.h"

#include <algorithm>

namespace kiln::serving {

BodyReaders::BodyReaders(int threads, size_t max_waiting_bytes)
    : max_waiting_bytes_(max_waiting_bytes) {
  for (int i = 0; i < std::max(threads, 1); ++i) threads_.emplace_back([this] { run(); });
}

BodyReaders::~BodyReaders() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ending_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

bool BodyReaders::post(size_t bytes, std::function<void()> read) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > max_waiting_bytes_ - std::min(waiting_bytes_, max_waiting_bytes_)) return false;
    waiting_bytes_ += bytes;
    waiting_.push_back({bytes, std::move(read)});
  }
  wake_.notify_one();
  return true;
}

size_t BodyReaders::waiting_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return waiting_bytes_;
}

void BodyReaders::run() {
  while (true) {
    Waiting next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return ending_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // ending, and nothing is left to read
      next = std::move(waiting_.front());
      waiting_.pop_front();
    }
    // Counted until read: a body's bytes are held until its request has been taken apart.
    next.read();
    std::lock_guard<std::mutex> lock(mutex_);
    waiting_bytes_ -= next.bytes;
  }
}

}  // namespace kiln::serving
