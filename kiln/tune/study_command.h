#pragma once
// `kiln tune`'s policy, beside the study it runs (docs/tuning.md): where a study lives
// (RUNS_ROOT/NAME/STUDY), what a new one saves (its config with the metric and mode it optimizes),
// what a resumed one may change (only its budget: tune.trials, tune.time, tune.parallel), and the
// setup its trials run with. The command reads the config files; the engine reads a config
// (`read_experiment`), which keeps this folder free of the engine and of LibTorch.
// Thread-safety: one command at a time.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/tune/tune_options.h"

namespace kiln::tune {

/// What the training side reads of a config that a study needs: the tune: section, and what it
/// falls back on (the training's monitored metric and its mode, the seed).
struct ExperimentFacts {
  std::optional<TuneOptions> tune;
  std::string monitor;
  bool maximize = false;
  int64_t seed = 0;
};

struct StudyCommand {
  RawConfig config;                    // a new study's: the files, --space and --set applied
  std::vector<std::string> overrides;  // --set as given: a resumed study takes its budget keys
  std::string runs_root = "runs";
  std::string study;  // its name; "" for a new study named by the time
  bool resume = false;
  bool space_given = false;  // --space, which a resumed study refuses
  int64_t parallel = 0;      // --parallel; 0 keeps tune.parallel
  std::string program;       // the kiln binary trials run
  int64_t cores = 1;
  /// Checks a config as `kiln train` would and gives its facts (throws ConfigError).
  std::function<ExperimentFacts(const RawConfig&)> read_experiment;
  std::function<std::string()> now;  // UTC, ISO 8601
};

/// Whether a config's study runs a program (a tune.command), not kiln train.
bool runs_a_program(const RawConfig& config);
/// The facts of a study that runs a program, from its config alone: it holds only version,
/// name, seed and tune (the program reads its own settings), and tune.metric and tune.mode are
/// given (no train.monitor stands in). ConfigError naming the key otherwise.
ExperimentFacts program_study_facts(const RawConfig& config);

/// --space FILE: the search space, in place of the config's tune.space; a config without a
/// tune: section gets one with its defaults. ConfigError when the file is no mapping of paths.
void use_space_file(RawConfig& config, const std::string& file);

/// Creates the study (or opens the one to resume, under its lock), then runs it as run_study
/// does; returns its exit status. UsageError for a resume that changes more than the budget.
int run_study_command(const StudyCommand& command);

}  // namespace kiln::tune
