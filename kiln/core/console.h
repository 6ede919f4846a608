#pragma once
// What a long command shows while it works. On a terminal: a progress bar redrawn in place (steps,
// loss, samples/s, ETA), with log lines printed above it. Elsewhere (CI, pipes, files): plain log
// lines only, each carrying what the bar would show of time: the date and time, and once work
// has begun its elapsed time and ETA. Every log line is also appended, stamped so, to the run's
// train.log.
// Thread-safety: one thread.

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

namespace kiln {

/// Seconds since some fixed point; injected so tests control time.
using Clock = std::function<double()>;
/// Wall-clock seconds since the epoch.
double system_seconds();
/// Seconds of a monotonic clock, for timing work (never set back).
double steady_seconds();

struct ProgressState {
  int64_t step = 0, total_steps = 0;
  double epoch = 0;
  double loss = 0;
  double samples_per_s = 0;
  double elapsed_s = 0;
};

class Console {
 public:
  /// Writes to `out` (null: nowhere, the log file only); draws a bar when `interactive`.
  /// `log_path` may be empty (no file).
  Console(std::FILE* out, bool interactive, const std::string& log_path, Clock clock);
  ~Console();

  /// A log line: printed (above the bar) and appended to the log file.
  void line(const std::string& text);
  /// Redraws the training bar (at most 10 times a second); when not interactive, only keeps the
  /// state for the elapsed time and ETA of the next lines.
  void progress(const ProgressState& state);
  /// Redraws any one-line status the same way; `last` forces the final redraw.
  void status(const std::string& text, bool last);
  /// Removes the bar, before the program prints its last lines.
  void finish();

 private:
  void clear_bar();
  /// `2026-11-28 21:40:12 [0:42 elapsed, ETA 2:13] `: the time now, and once progress() has
  /// been told of a step, that step's elapsed time and the time left.
  std::string stamp() const;

  std::FILE* out_;
  bool interactive_;
  std::ofstream log_;
  Clock clock_;
  double last_draw_ = -1;
  bool bar_visible_ = false;
  ProgressState last_progress_;
  bool progressed_ = false;
};

/// `[=======>      ] 1200/2345 ep 2.51 loss 0.3121 8512 samples/s ETA 2:13`.
std::string progress_bar_text(const ProgressState& state, int width);
/// `[=====>     ] 30000/60000 records 41,000/s ETA 0:01`, for work counted in items.
std::string count_bar_text(int64_t done, int64_t total, double elapsed_s, const char* unit,
                           int width);
/// `1:02:03` or `2:13`.
std::string format_duration(double seconds);

}  // namespace kiln
