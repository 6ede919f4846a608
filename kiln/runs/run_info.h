#pragma once
// What `kiln runs`, `kiln board` and `kiln report` know of one run folder, read from its files
// alone (run.json, summary.json, config.yaml, metrics.csv, notes.md) without LibTorch. A folder
// whose files are missing, cut short or not valid JSON/YAML is still listed: what could be read
// is kept and `problems` says what could not, naming the file.
// Thread-safety: values; read_run, read_runs and find_runs only read files.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln::runs {

struct BestValue {
  std::string metric;
  double value = 0;
  int64_t step = 0;
};

struct RunInfo {
  std::string path;  // the run folder
  std::string name;  // the experiment's name (config.yaml), else the parent folder's
  std::string id;    // the folder's own name, e.g. 20261122-101500
  // run.json: running, finished, stopped, failed, pruned; "" when unknown; killed when it says
  // running but no process holds the run's lock.
  std::string status;
  std::string start_time, end_time;  // ISO 8601 UTC, "" when unknown
  double duration_s = -1;            // end - start, or -1
  int64_t steps = -1;
  std::optional<BestValue> best;
  std::map<std::string, double> final;  // the latest value of every tag
  std::map<std::string, Json> hparams;  // config.yaml's leaves by dotted path
  std::string notes;
  std::vector<std::string> problems;
};

/// One row of metrics.csv (`step,epoch,split,metric,value,wall_time`), the tag joined back.
struct MetricsRow {
  int64_t step = 0;
  double epoch = 0;
  std::string tag;
  double value = 0, wall_time = 0;
};

/// The row `line` holds; nothing for the header. Throws std::invalid_argument saying what is
/// wrong with any other line that is not a row as kiln writes them (six cells, a whole step,
/// numbers as {:g} writes them, UTF-8 names without control characters).
std::optional<MetricsRow> parse_metrics_row(const std::string& line);

/// Reads one run folder; never throws for damaged files (see `problems`).
RunInfo read_run(const std::string& path);

/// read_run of each path, on as many threads as there are cores: listing a thousand runs is
/// mostly parsing their config.yaml files.
std::vector<RunInfo> read_runs(const std::vector<std::string>& paths);

/// Every run folder under `root` (root itself when it is one), sorted by path. A run folder is
/// one holding run.json or metrics.csv; checkpoints/ and tensorboard/ are not searched.
std::vector<std::string> find_runs(const std::string& root);

/// Seconds since the epoch of an ISO 8601 UTC time as kiln writes it (2026-11-22T10:15:00Z).
std::optional<double> parse_iso_time(const std::string& text);

}  // namespace kiln::runs
