#include "kiln/serving/request_gate.h"

namespace kiln::serving {

void RequestGate::wait_until_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return in_flight_ == 0; });
}

bool RequestGate::enter() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (draining_) return false;
  ++in_flight_;
  return true;
}

void RequestGate::leave() {
  std::lock_guard<std::mutex> lock(mutex_);  // notified under the lock: the destructor may follow
  if (--in_flight_ == 0) idle_.notify_all();
}

int64_t RequestGate::drain(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  idle_.wait_for(lock, timeout, [this] { return in_flight_ == 0; });
  return in_flight_;
}

int64_t RequestGate::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

}  // namespace kiln::serving
