#pragma once
// The trials of a study that runs a program (`tune.command`) instead of kiln train: each started
// with its command line (command_line.h) in the folder kiln tune runs in, with
//   KILN_TUNE_TRIAL    its number
//   KILN_TUNE_PARAMS   its values, a JSON object by parameter
//   KILN_TRIAL_DIR     a folder of its own (STUDY/trial-NNNN) for whatever it keeps
//   KILN_METRICS_FILE  KILN_TRIAL_DIR/metrics.jsonl, where it may write its reports
//   KILN_TUNE_RESUMED  1 when `kiln tune --resume` starts it again
// Its output goes to its log as it comes and is read for reports (trial_output.h): each value of
// the study's metric with a step is recorded in the study and the pruner asked; a pruned trial
// is stopped with SIGTERM. It ends complete with the metric's final value (the last report
// without a step, else the last with one), pruned, or failed: a nonzero exit, no value of the
// metric, or a malformed report (the program is stopped). A study stopped by a signal passes it
// on and waits for its trials, for --resume to start them again with the same values.
// Each program runs under a keeper (trial_keeper.h), the process the study knows as the trial's:
// a trial told to stop (SIGTERM to its keeper) has tune.kill_after to end, then it is killed
// (SIGKILL) with all it started; what a program leaves when it ends is told to stop too, and
// killed at the same deadline; the keeper ends last, so a trial's end is noticed once nothing
// of it is left, wherever its processes went (their own group, `setsid`). Should the study die,
// the keepers do the same.
// Torch-free. Thread-safety: one thread (the study's).

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "kiln/tune/pruner.h"
#include "kiln/tune/study.h"
#include "kiln/tune/study_setup.h"
#include "kiln/tune/trial_output.h"
#include "kiln/tune/trial_process.h"

namespace kiln::tune {

class ProgramTrials {
 public:
  using Say = std::function<void(const std::string&)>;
  ProgramTrials(Study& study, const StudySetup& setup, SignalsToTrials& signals, Say say);
  ~ProgramTrials();
  ProgramTrials(const ProgramTrials&) = delete;
  ProgramTrials& operator=(const ProgramTrials&) = delete;

  /// Starts trial `number` in `trial_dir`, its output appended to `log`; `resumed` when the
  /// study had started it before. Returns its process.
  pid_t start(int64_t number, const std::string& trial_dir, const std::string& log, bool resumed);
  /// Waits up to `timeout_ms` for output, then handles what every trial has said.
  void watch(int timeout_ms);
  /// Records how trial `number`, whose process ended with `status`, ended.
  void finish(int64_t number, int status);

 private:
  struct Running {
    pid_t pid = -1;
    int exit_fd = -1;  // readable once the process has ended (a pidfd), or -1
    std::unique_ptr<TrialOutput> output;
    std::optional<double> final_value, last_value;
    std::optional<std::string> pruned, failed;
    bool told = false;  // to stop: its keeper kills it at the deadline
  };
  /// Handles `read` (a TrialOutput's read or read_to_end) of trial `number`: its reports, or
  /// the malformed one that fails it.
  void take(int64_t number, Running& trial, const std::function<std::vector<MetricReport>()>& read);
  void stop(int64_t number, Running& trial, const std::string& why);
  void end(int64_t number, Running& trial, int status);
  /// The study's trials as the pruner sees them: read once, then kept up to date report by
  /// report (reading the whole study for each report made 10,000 of them take 45 s).
  const std::vector<TrialRecord>& known_trials();
  /// Adds `value` to the trials known_trials() keeps; false when they are not kept (read
  /// again from the study when next needed, which must hold the value by then).
  bool note_report(int64_t number, const ReportedValue& value);

  Study& study_;
  const StudySetup& setup_;
  SignalsToTrials& signals_;
  Say say_;
  std::unique_ptr<Pruner> pruner_;
  bool maximize_;
  std::map<int64_t, Running> running_;
  std::optional<std::vector<TrialRecord>> trials_;  // known_trials(); reset as trials start, end
};

}  // namespace kiln::tune
