#pragma once
// What the program of a trial (`tune.command`) says while it runs: its output, read from a pipe
// as it comes and appended to the trial's log, and the metrics file it may write
// (KILN_METRICS_FILE); both are read for reports (metric_lines.h). Reads are bounded: a pipe's
// or the file's bytes in pieces of 64 KiB, one line at most kMaxMetricLine bytes before it is
// judged; at most kMaxReports reports a trial (each is written to the study: a program that
// floods its metrics file kept the study hours behind and growing), and the log kept to
// kMaxLogBytes. A malformed report, or one too many, is an Error naming the log or file and its
// line; after it the file is no longer read, nor the output parsed (it still goes to the log).
// Torch-free. Thread-safety: one thread.

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/tune/metric_lines.h"

namespace kiln::tune {

constexpr int64_t kMaxReports = 100000;
constexpr int64_t kMaxLogBytes = int64_t(256) << 20;

/// Complete lines of a stream of bytes, counted, with a bound on a line's length.
class LineSplitter {
 public:
  /// Adds `bytes`; returns the lines they complete (without the newline) with their numbers
  /// from 1. A line longer than kMaxMetricLine is returned cut to that length, once.
  std::vector<std::pair<int64_t, std::string>> add(const char* bytes, size_t size);
  /// The last line, when the stream ended without a newline after it.
  std::vector<std::pair<int64_t, std::string>> end();

 private:
  std::string partial_;
  int64_t lines_ = 0;
  bool skipping_ = false;  // inside a line cut at the bound, until its newline
};

class TrialOutput {
 public:
  /// Reads `pipe` (its read end, which this closes), appending to the file `log`; and the
  /// metrics file `metrics` when it exists. `log_name` and `metrics_name` are how messages name
  /// them. The log keeps at most `max_log_bytes` of the output.
  TrialOutput(int pipe, const std::string& log, std::string log_name, std::string metrics,
              std::string metrics_name, int64_t max_log_bytes = kMaxLogBytes);
  ~TrialOutput();
  TrialOutput(const TrialOutput&) = delete;
  TrialOutput& operator=(const TrialOutput&) = delete;

  /// The pipe's descriptor, for poll(); -1 once it ended.
  int fd() const { return pipe_; }
  /// Reads what the pipe holds now and the metrics file's new lines; returns the reports they
  /// complete, in order (the output's first). Error for a malformed one.
  std::vector<MetricReport> read();
  /// Reads both to their ends (the program has ended): the reports left, a last line without a
  /// newline included; the metrics file only with `metrics_too` (a user who pressed Ctrl-C twice
  /// does not wait for it). Waits at most 5 s for the pipe's end.
  std::vector<MetricReport> read_to_end(bool metrics_too = true);
  /// The metrics file kiln made is the file (device, inode) given: another put in its place
  /// (renamed over it, or a hard link to another file) is an error naming it.
  void metrics_file_is(dev_t device, ino_t inode) { made_ = {device, inode}; }
  /// The last line of output that was not a report, for a failed trial's error.
  const std::string& last_line() const { return last_line_; }

 private:
  std::vector<MetricReport> read_all(bool metrics_too);
  void read_pipe(std::vector<MetricReport>& reports);
  void read_metrics(std::vector<MetricReport>& reports, bool to_end);
  void take_output_line(int64_t number, const std::string& line,
                        std::vector<MetricReport>& reports);
  void take_metrics_line(int64_t number, const std::string& line,
                         std::vector<MetricReport>& reports);
  void count_report();
  void write_log(const char* bytes, size_t size);

  int pipe_;
  std::FILE* log_;
  std::string log_name_, metrics_, metrics_name_, last_line_;
  LineSplitter output_lines_, metrics_lines_;
  int64_t metrics_offset_ = 0;
  std::optional<std::pair<dev_t, ino_t>> made_;  // the metrics file kiln made
  int64_t reports_ = 0, log_bytes_ = 0, max_log_bytes_;
  bool judged_ = false;  // a report failed the trial: nothing more is parsed
};

}  // namespace kiln::tune
