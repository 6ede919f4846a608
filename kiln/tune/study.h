#pragma once
// A study's record: one SQLite database (`study.db` in the study's folder; WAL mode, so trial
// processes report while `kiln tune` reads) holding the study, its parameters, its trials with
// their sampled values, states and final values, and the values each trial reported on the way.
// Every state change is one transaction. The schema is in docs/tuning.md; `user_version` is its
// version. A database that is not a kiln study, or is damaged, is reported, never replaced.
// Torch-free. Thread-safety: one Study per thread; any number of processes may open the same file.

#include <sqlite3.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/tune/sampler.h"

namespace kiln::tune {

struct StudyInfo {
  std::string name;
  std::string metric;
  bool maximize = false;
  Json config;  // the base config the trials start from, `tune` section included
  std::string created;
};

struct ReportedValue {
  int64_t step = 0;
  double epoch = 0;
  double value = 0;
};

struct TrialRecord {
  int64_t number = 0;
  TrialState state = TrialState::kRunning;
  Json values = Json::object();  // the sampled config values, by parameter
  Assignment assignment;
  std::optional<double> value;  // the metric at its end (complete) or where it stopped (pruned)
  std::string run_dir;          // its run folder, relative to the study's folder
  std::string error, started, finished;
  std::vector<ReportedValue> reported;
};

const char* state_name(TrialState state);
/// `trial-0007`: trial 7's run folder inside the study's folder.
std::string trial_folder(int64_t number);

class Study {
 public:
  /// Creates the database at `path` (which must not exist) for `info` and `space`.
  static Study create(const std::string& path, const StudyInfo& info, const SearchSpace& space);
  /// Opens an existing study; an Error names the file when it is missing, not a kiln study, or
  /// damaged. A change waits up to `busy_seconds` for another process's change to the file,
  /// then fails naming the file.
  static Study open(const std::string& path, double busy_seconds = 60);

  const std::string& path() const { return path_; }
  StudyInfo info() const;
  /// The next trial, running, with its values, in trial_folder(number); returns its number.
  int64_t start_trial(const SearchSpace& space, const Assignment& assignment,
                      const std::string& now);
  void finish_trial(int64_t number, TrialState state, std::optional<double> value,
                    const std::string& error, const std::string& now);
  /// Back to running (a resumed study goes on with it).
  void restart_trial(int64_t number);
  /// A value trial `number` reported at `step` (kept once per step; a resumed trial repeats).
  void report(int64_t number, const ReportedValue& value);
  /// Several, in one transaction: a program printing 100,000 reports had each written (and
  /// synced) on its own, about 330 a second.
  void report(int64_t number, const std::vector<ReportedValue>& values);
  std::vector<TrialRecord> trials() const;
  TrialRecord trial(int64_t number) const;

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
  };
  Study(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  void execute(const std::string& sql) const;
  /// The space the parameters table holds, in its order; damage names the table and row.
  SearchSpace stored_space() const;

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

/// What a sampler is shown of the study's trials.
std::vector<TrialView> trial_views(const std::vector<TrialRecord>& trials, bool maximize);

}  // namespace kiln::tune
