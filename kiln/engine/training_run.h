#pragma once
// A whole `kiln train`: check the config, make the run directory, build the experiment, train,
// write the final checkpoint and the summary, and keep run.json's status true at every moment
// (running, then finished or failed).
// Thread-safety: one run per process.

#include <string>

#include "kiln/core/config.h"
#include "kiln/engine/console.h"
#include "kiln/engine/evaluator.h"

namespace kiln::engine {

struct TrainRequest {
  RawConfig config;
  std::string runs_root = "runs";
  std::string note;          // written to notes.md when given
  std::string command_line;  // recorded in run.json
  bool dry_run = false;      // build everything, train nothing, write nothing
};

/// Runs the request, printing `run: <dir>` first; returns the run directory ("" on a dry run).
std::string run_training(const TrainRequest& request, std::FILE* out, Clock clock);

/// `kiln eval`: the metrics of a run's checkpoint on a split.
MetricValues evaluate_run(const std::string& run_dir, const std::string& checkpoint,
                          const std::string& split);

}  // namespace kiln::engine
