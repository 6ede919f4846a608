#pragma once
// A whole `kiln train`: check the config, apply its runtime, make the run directory (or reopen it
// to resume), build the experiment, train, write the final checkpoint and the summary, and keep
// run.json's status true at every moment (running, then finished, stopped or failed). Every
// process of a job runs this; the run folder is named once and only rank 0 writes into it.
// Thread-safety: one run per process.

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "kiln/core/config.h"
#include "kiln/core/console.h"
#include "kiln/distributed/context.h"
#include "kiln/distributed/rendezvous.h"
#include "kiln/engine/evaluator.h"

namespace kiln::experiment {

class TrialReporter;

struct TrainRequest {
  RawConfig config;
  std::string runs_root = "runs";
  std::string note;          // written to notes.md when given
  std::string command_line;  // recorded in run.json
  bool dry_run = false;      // build everything, train nothing, write nothing
  std::string resume_dir;    // continue this run (config: its resume_config()); "" = a new run
  // The new run's folder, given by --run-dir or a launcher (KILN_RUN_DIR); "" = rank 0 makes
  // runs_root/NAME/TIMESTAMP and tells the other processes.
  std::string run_dir;
  // The processes training together; alone by default. With `job` (the launcher's environment,
  // distributed/rendezvous.h) of more than one rank, run_training joins it and uses its context.
  std::shared_ptr<distributed::Context> context = distributed::single_process();
  std::optional<distributed::Rendezvous> job;
  // Set to a signal's number by a handler: finish the step, save a checkpoint, stop.
  const std::atomic<int>* stop_signal = nullptr;
  // Print only the `run:` line (errors still go to stderr); train.log gets every line.
  bool quiet = false;
  // For a trial of a study (kiln tune): reports to the study and may prune; rank 0 runs it.
  std::shared_ptr<TrialReporter> trial;
};

struct TrainOutcome {
  std::string run_dir;  // "" on a dry run
  int exit_code = 0;    // 0, or 128 + the signal that stopped training
};

/// Runs the request, printing `run: <dir>` first.
TrainOutcome run_training(const TrainRequest& request, std::FILE* out, Clock clock);

struct RunEvaluation {
  engine::MetricValues values;
  int64_t examples = 0;  // evaluated
  double seconds = 0;    // the evaluation itself: no start-up, no data loading before it
  std::map<std::string, int64_t> unseen;  // values no vocabulary had, by column (tabular data)
};

/// `kiln eval`: the metrics of a run's checkpoint on a split, timed by `clock`. The model is opened
/// from the checkpoint (open_model); only the split's data is read.
RunEvaluation evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                           const std::string& split, const Clock& clock);

}  // namespace kiln::experiment
