#pragma once
// Lines a server writes for what clients do (a request cut short), kept to a few a minute: a
// client that cuts a thousand requests short a second would otherwise fill the log and the disk
// under it. Within each window the first `per_window` lines pass; the rest are counted, and the
// first line of a later window says how many were left out.
// Torch-free. Thread-safety: none; one thread uses a throttle.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace kiln {

class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  LogThrottle(int64_t per_window, Clock::duration window,
              std::function<Clock::time_point()> now = Clock::now);

  /// The line to write for `line` (with a note of the lines left out before it), or nothing
  /// when it is one too many for this window.
  std::optional<std::string> admit(const std::string& line);

 private:
  int64_t per_window_;
  Clock::duration window_;
  std::function<Clock::time_point()> now_;
  Clock::time_point window_start_{};
  bool started_ = false;
  int64_t passed_ = 0, left_out_ = 0;
};

}  // namespace kiln
