#include "kiln/core/console.h"

#include <chrono>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace kiln {

double system_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

double steady_seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

namespace {

std::string bar_text(int64_t done, int64_t total, int width) {
  double fraction = total > 0 ? std::min(1.0, double(done) / double(total)) : 0;
  int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) bar += '>';
  bar.resize(static_cast<size_t>(width), ' ');
  return "[" + bar + "]";
}

std::string eta_text(int64_t done, int64_t total, double elapsed_s) {
  if (done <= 0 || total <= 0) return "?";
  return format_duration(elapsed_s / double(done) * double(total - done));
}

}  // namespace

Console::Console(std::FILE* out, bool interactive, const std::string& log_path, Clock clock)
    : out_(out), interactive_(interactive && out != nullptr), clock_(std::move(clock)) {
  if (!log_path.empty()) log_.open(log_path, std::ios::app);
}

Console::~Console() { finish(); }

void Console::line(const std::string& text) {
  clear_bar();
  if (out_) {
    std::string stamped = interactive_ ? text : stamp() + text;
    std::fprintf(out_, "%s\n", stamped.c_str());
    std::fflush(out_);
  }
  if (log_.is_open()) {
    log_ << stamp() << text << "\n";
    log_.flush();
  }
}

std::string Console::stamp() const {
  auto now = static_cast<std::time_t>(clock_());
  std::tm local{};
  localtime_r(&now, &local);
  char time_text[32];
  std::strftime(time_text, sizeof(time_text), "%Y-%m-%d %H:%M:%S", &local);
  if (!progressed_) return std::string(time_text) + " ";
  const ProgressState& p = last_progress_;
  return fmt::format("{} [{} elapsed, ETA {}] ", time_text, format_duration(p.elapsed_s),
                     eta_text(p.step, p.total_steps, p.elapsed_s));
}

void Console::progress(const ProgressState& state) {
  last_progress_ = state;
  progressed_ = true;
  if (!interactive_) return;
  status(progress_bar_text(state, 30), state.step == state.total_steps);
}

void Console::status(const std::string& text, bool last) {
  if (!interactive_) return;
  double now = clock_();
  if (bar_visible_ && now - last_draw_ < 0.1 && !last) return;
  last_draw_ = now;
  std::fprintf(out_, "\r\033[K%s", text.c_str());
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
  return fmt::format("{} {}/{} ep {:.2f} loss {:.4f} {:.0f} samples/s ETA {}",
                     bar_text(s.step, s.total_steps, width), s.step, s.total_steps, s.epoch, s.loss,
                     s.samples_per_s, eta_text(s.step, s.total_steps, s.elapsed_s));
}

std::string count_bar_text(int64_t done, int64_t total, double elapsed_s, const char* unit,
                           int width) {
  double rate = elapsed_s > 0 ? double(done) / elapsed_s : 0;
  return fmt::format("{} {}/{} {} {:.0f}/s ETA {}", bar_text(done, total, width), done, total, unit,
                     rate, eta_text(done, total, elapsed_s));
}

}  // namespace kiln
