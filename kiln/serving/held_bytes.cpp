#include "kiln/serving/held_bytes.h"

#include "kiln/core/peak_memory.h"

namespace kiln::serving {

bool HeldBytes::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (held_ > 0 && (bytes > cap_ || held_ > cap_ - bytes)) return false;
  held_ += bytes;
  return true;
}

void HeldBytes::give_back(size_t bytes) {
  bool give_memory_back = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ -= bytes;
    since_return_ += bytes;
    give_memory_back = held_ == 0 && since_return_ >= kReturnAfterBytes;
    if (give_memory_back) since_return_ = 0;
  }
  if (give_memory_back) give_back_freed_memory();  // milliseconds: outside the lock
}

size_t HeldBytes::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return held_;
}

size_t bytes_held_by(const HostTensors& inputs) {
  size_t bytes = 0;
  for (const auto& [name, tensor] : inputs) {
    bytes += tensor.numbers.size() * sizeof(double);
    for (const std::string& text : tensor.strings) bytes += sizeof(std::string) + text.size();
  }
  return bytes;
}

}  // namespace kiln::serving
