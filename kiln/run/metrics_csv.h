#pragma once
// metrics.csv, the run's values in long format: a header `step,epoch,split,metric,value,wall_time`
// and one row per logged value, appended and flushed as training goes. This file is the format's
// one owner: the writer, the row parser every reader goes through (kiln runs, the board, resume),
// the trim a resume makes, and the incremental read of a live run. Torch-free.
// Thread-safety: a MetricsCsv on one thread; the functions only read or replace files.

#include <array>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::run {

inline constexpr std::string_view kMetricsHeader = "step,epoch,split,metric,value,wall_time";

/// One row, the tag joined back (`split/metric`).
struct MetricsRow {
  int64_t step = 0;
  double epoch = 0;
  std::string tag;
  double value = 0, wall_time = 0;
};

/// The row `line` holds; nothing for the header. Throws std::invalid_argument saying what is
/// wrong with any other line that is not a row as kiln writes them (six cells, a whole step,
/// numbers as {:g} writes them, UTF-8 names without control characters).
std::optional<MetricsRow> parse_metrics_row(std::string_view line);

/// Appends rows to metrics.csv, flushing each so other processes (`kiln runs`, the board, a
/// crash post-mortem) see it at once; writes the header into a new or empty file.
class MetricsCsv {
 public:
  explicit MetricsCsv(const std::string& path);
  void append(int64_t step, double epoch, const std::string& tag, double value, double wall_time);
  /// Rewrites the file without the rows after `step` (and any row a crash cut short).
  void truncate_after(int64_t step);

 private:
  void open();

  std::string path_;
  std::ofstream out_;
};

/// Drops the rows of the file `path` logged after `step` (by the attempt that stopped after its
/// last checkpoint; they will be logged again) and any row a crash cut short. Nothing when the
/// file is missing.
void trim_metrics(const std::string& path, int64_t step);

/// The last part of metrics.csv, checked, as a listing reads it: a long run's file is not read
/// whole, so listing stays fast however long runs trained.
struct MetricsTail {
  bool missing = false;
  std::string unreadable;        // not a regular file, or its header is not kiln's
  std::vector<MetricsRow> rows;  // the part's whole rows, up to a damaged one
  std::string damaged_row;       // the first row that is not as kiln writes them, by byte
  bool ends_cut_short = false;   // the last line has no newline (yet)
  bool partial = false;          // the part read starts after the file's start
  int64_t bytes = 0;             // how much was read
};

/// Reads and checks the last `max_bytes` of metrics.csv (and its header).
MetricsTail read_metrics_tail(const std::string& path, int64_t max_bytes);

/// The whole rows of metrics.csv from byte `from` on, for a reader that follows a live run.
struct MetricsSince {
  std::vector<MetricsRow> rows;  // damaged rows are left out
  int64_t next = 0;              // where the next read starts
  bool restart = false;          // the file was rewritten (a resume): `rows` start from its top
  std::string problem;           // the file is not a regular file
};

/// The rows of the metrics.csv of the run folder `run` after byte `from` (a `next` of an earlier
/// read, or 0). When `from` no longer falls at the start of a row (the file was cut back by a
/// resume and grew again) it reads from the top and says so with `restart`.
MetricsSince read_metrics_since(const std::string& run, int64_t from);

/// One row's cells, the names viewing the line they were read from.
struct MetricsCells {
  int64_t step = 0;
  double epoch = 0;
  std::string_view split, metric;
  double value = 0, wall_time = 0;
};

/// What tells one state of a run's metrics.csv from another: its inode, size and status-change
/// time (the file only grows, or is replaced by a trimmed copy when the run resumes).
using FileVersion = std::array<int64_t, 3>;
/// The version of `run`'s metrics.csv; nothing when it is no regular file.
std::optional<FileVersion> metrics_version(const std::string& run);

/// As read_metrics_since, but each row's cells are given to `take` (in file order) instead of
/// kept, and `rows` stays empty: a reader of a million rows makes no object per row.
MetricsSince read_metrics_since(const std::string& run, int64_t from,
                                const std::function<void(const MetricsCells&)>& take);

}  // namespace kiln::run
