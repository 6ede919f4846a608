#pragma once
// What `kiln runs`, `kiln board` and `kiln report` know of one run folder, read from its files
// alone (run.json, summary.json, config.yaml, metrics.csv, notes.md) without LibTorch. A folder
// whose files are missing, cut short or not valid JSON/YAML is still listed: what could be read
// is kept and `problems` says what could not, naming the file.
// The same checks back the readers of single files (run.json, summary.json) that resume and tune
// use: this file and metrics_csv.h are the only readers of a run folder's files.
// Thread-safety: values; the functions only read files.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"

namespace kiln::run {

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

/// notes.md is read up to this; a bigger one is a problem of the run's.
constexpr size_t kMaxNotesBytes = size_t{1} << 20;

/// Reads one run folder; never throws for damaged files (see `problems`).
RunInfo read_run(const std::string& path);

/// The size and modification time of each file read_run reads (a missing one as empty): when
/// it is unchanged and the run does not say it is running, read_run would read the same.
std::string run_files_signature(const std::string& path);

/// read_run of each path, on as many threads as there are cores: listing a thousand runs is
/// mostly parsing their config.yaml files.
std::vector<RunInfo> read_runs(const std::vector<std::string>& paths);

/// Every run folder under `root` (root itself when it is one), sorted by path. A run folder is
/// one holding run.json or metrics.csv; checkpoints/ and tensorboard/ are not searched.
std::vector<std::string> find_runs(const std::string& root);

/// run.json of the run folder `path`, checked as read_run checks it (a JSON object, a known
/// status, times as kiln writes them, the end not before the start); DataError naming the file
/// and what is wrong, when it is missing too.
Json read_record(const std::string& path);

/// summary.json of the run folder `path`, checked as read_run checks it; nothing when there is
/// none (a run still training), DataError when it is damaged.
std::optional<Json> read_summary(const std::string& path);

/// The newest run folder under `runs_root`/`name` whose run.json does not say "finished" (an
/// unreadable one counts as unfinished); UsageError when there is none.
std::string newest_unfinished_run(const std::string& runs_root, const std::string& name);

/// The text of one of the run's files a person reads (config.yaml, notes.md, summary.json,
/// run.json, train.log): nothing for another name or a missing file.
std::optional<std::string> read_run_text(const std::string& path, const std::string& name);

/// The names of a run's own files that read_run(), read_run_text() and the metrics rows read,
/// for a server of runs to keep them inside its root (links included).
std::vector<std::string> files_read();

/// Seconds since the epoch of an ISO 8601 UTC time as kiln writes it (2026-11-22T10:15:00Z).
std::optional<double> parse_iso_time(const std::string& text);

}  // namespace kiln::run
