#include "kiln/engine/console.h"

#include <chrono>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace kiln::engine {

double system_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

Console::Console(std::FILE* out, bool interactive, const std::string& log_path, Clock clock)
    : out_(out), interactive_(interactive), clock_(std::move(clock)) {
  if (!log_path.empty()) log_.open(log_path, std::ios::app);
}

Console::~Console() { finish(); }

void Console::line(const std::string& text) {
  clear_bar();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
  if (log_.is_open()) {
    auto now = static_cast<std::time_t>(clock_());
    std::tm local{};
    localtime_r(&now, &local);
    char stamp[32];
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
    log_ << stamp << " " << text << "\n";
    log_.flush();
  }
}

void Console::progress(const ProgressState& state) {
  if (!interactive_) return;
  double now = clock_();
  if (bar_visible_ && now - last_draw_ < 0.1 && state.step != state.total_steps) return;
  last_draw_ = now;
  std::fprintf(out_, "\r\033[K%s", progress_bar_text(state, 30).c_str());
  std::fflush(out_);
  bar_visible_ = true;
}

void Console::finish() { clear_bar(); }

void Console::clear_bar() {
  if (!bar_visible_) return;
  std::fprintf(out_, "\r\033[K");
  bar_visible_ = false;
}

std::string format_duration(double seconds) {
  auto total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  int64_t hours = total / 3600, minutes = total / 60 % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}:{:02d}:{:02d}", hours, minutes, secs);
  return fmt::format("{}:{:02d}", minutes, secs);
}

std::string progress_bar_text(const ProgressState& s, int width) {
  double fraction = s.total_steps > 0 ? std::min(1.0, double(s.step) / double(s.total_steps)) : 0;
  int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  std::string eta = "?";
  if (s.step > 0 && s.total_steps > 0)
    eta = format_duration(s.elapsed_s / double(s.step) * double(s.total_steps - s.step));
  return fmt::format("[{}] {}/{} ep {:.2f} loss {:.4f} {:.0f} samples/s ETA {}", bar, s.step,
                     s.total_steps, s.epoch, s.loss, s.samples_per_s, eta);
}

}  // namespace kiln::engine
