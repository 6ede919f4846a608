#include "kiln/core/log_throttle.h"

#include <fmt/format.h>

namespace kiln {

LogThrottle::LogThrottle(int64_t per_window, Clock::duration window,
                         std::function<Clock::time_point()> now)
    : per_window_(per_window), window_(window), now_(std::move(now)) {}

std::optional<std::string> LogThrottle::admit(const std::string& line) {
  Clock::time_point now = now_();
  if (!started_ || now - window_start_ >= window_) {
    started_ = true;
    window_start_ = now;
    passed_ = 0;
  }
  if (passed_ >= per_window_) {
    ++left_out_;
    return std::nullopt;
  }
  ++passed_;
  if (left_out_ == 0) return line;
  std::string noted = fmt::format("({} more such line{} left out) {}", left_out_,
                                  left_out_ == 1 ? " was" : "s were", line);
  left_out_ = 0;
  return noted;
}

}  // namespace kiln
