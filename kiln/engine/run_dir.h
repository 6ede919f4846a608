#pragma once
// The run directory of DESIGN.md §6: `<root>/<name>/<YYYYmmdd-HHMMSS>[-N]/` holding the resolved
// config, run.json (status and environment), metrics.csv (long format), summary.json, train.log,
// notes.md and checkpoints/. Small files are replaced atomically, so a crash mid-write leaves the
// previous version.
// Thread-safety: one writer per run.

#include <ctime>
#include <fstream>
#include <string>

#include "kiln/core/json.h"

namespace kiln::engine {

class RunDirectory {
 public:
  /// Makes a new, unique run directory for `name` under `root`, stamped with `now`.
  static RunDirectory create(const std::string& root, const std::string& name, std::time_t now);
  /// Opens an existing run directory; throws UsageError when it has no config.yaml.
  static RunDirectory open(const std::string& path);

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  std::string checkpoints() const { return file("checkpoints"); }

  void write_json(const std::string& name, const Json& value) const;
  Json read_json(const std::string& name) const;

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
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

/// Appends `step,epoch,split,metric,value,wall_time` rows to metrics.csv, flushing each row so
/// other processes (`kiln runs`, a crash post-mortem) see them at once.
class MetricsLog {
 public:
  explicit MetricsLog(const std::string& path);
  void append(int64_t step, double epoch, const std::string& tag, double value, double wall_time);

 private:
  std::ofstream out_;
};

/// `YYYY-mm-ddTHH:MM:SSZ`.
std::string iso_time(std::time_t t);
/// The LibTorch this binary was built against, e.g. 1.13.0.
std::string libtorch_version();
/// Facts about this process for run.json: host, versions, CPU and GPU, git commit.
Json environment_info();

}  // namespace kiln::engine
