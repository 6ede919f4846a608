#include "kiln/serving/held_bytes.h"

#include <fmt/format.h>

#include <algorithm>

#include "kiln/core/peak_memory.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {

bool HeldBytes::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!fits(held_, bytes)) return false;
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

void refuse_without_room(const HeldBytes* held, size_t bytes) {
  if (!held) return;
  size_t now = held->held(), cap = held->cap();
  bytes = std::max<size_t>(bytes, 1);
  if (held->fits(now, bytes)) return;
  throw ServingError(StatusCode::kUnavailable,
                     fmt::format("the server is busy: the requests waiting for its models hold {} "
                                 "bytes, and this one's {} would pass its budget "
                                 "(--max-queued-bytes {}); try again",
                                 now, bytes, cap));
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
