#pragma once
// The run folder's layout (docs/design.md §6): `<root>/<name>/<YYYYmmdd-HHMMSS>[-N]/` holding the
// resolved config, run.json (status and environment), metrics.csv (long format), summary.json,
// train.log, notes.md, inputs.json, preprocessing.json, checkpoints/ and tensorboard/. The names
// below are the only spelling of those files in kiln; small files are replaced atomically, so a
// crash mid-write leaves the previous version. Torch-free. Thread-safety: one writer per run.

#include <ctime>
#include <string>

#include "kiln/core/folder_lock.h"
#include "kiln/core/json.h"

namespace kiln::run {

inline constexpr const char* kConfigFile = "config.yaml";
inline constexpr const char* kRecordFile = "run.json";
inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kMetricsFile = "metrics.csv";
inline constexpr const char* kNotesFile = "notes.md";
inline constexpr const char* kTrainLogFile = "train.log";
inline constexpr const char* kTraceFile = "trace.json";
inline constexpr const char* kInputsFile = "inputs.json";
inline constexpr const char* kPreprocessingFile = "preprocessing.json";
// A model written in PyTorch: the run's copy of its scripted module (model: {type: torchscript}).
inline constexpr const char* kModuleFile = "module.pt";
inline constexpr const char* kCheckpointsFolder = "checkpoints";
inline constexpr const char* kTensorBoardFolder = "tensorboard";

class RunDirectory {
 public:
  /// Makes a new, unique run directory for `name` under `root`, stamped with `now`.
  static RunDirectory create(const std::string& root, const std::string& name, std::time_t now);
  /// The directory `path` for a new run (made when missing); UsageError when it holds a run.
  static RunDirectory create_at(const std::string& path);
  /// Opens an existing run directory; throws UsageError when it has no config.yaml.
  static RunDirectory open(const std::string& path);
  /// The run directory `path` as another process (rank 0) makes and writes it, unchecked.
  static RunDirectory named(const std::string& path);

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string checkpoints() const { return file(kCheckpointsFolder); }

  /// Replaces the run's file `name` with `value`, atomically.
  void write_json(const std::string& name, const Json& value) const;

 private:
  explicit RunDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

/// Holds the run directory's `lock` file locked (flock) while one process trains it, so that a
/// second `kiln train --resume` of the same run is refused instead of deleting the first one's
/// checkpoint in progress. The kernel releases the lock when the process ends, however it ends.
class RunLock {
 public:
  /// Throws UsageError naming the run and the process holding it when another one does.
  explicit RunLock(const RunDirectory& run);

 private:
  FolderLock lock_;
};

/// `YYYY-mm-ddTHH:MM:SSZ`.
std::string iso_time(std::time_t t);

}  // namespace kiln::run
