#pragma once
// What a study's trials are run with (`kiln tune`): the program, the study folder, the base
// config and the `tune:` options, shared by the runner (study_runner.h) and the trials of any
// program (program_trials.h). Torch-free. Thread-safety: a value.

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

#include "kiln/core/config.h"
#include "kiln/core/json.h"
#include "kiln/tune/tune_options.h"

namespace kiln::tune {

struct StudySetup {
  std::string program;    // the kiln binary trials run
  std::string study_dir;  // holds study.db, configs/ and the trials' run folders
  Json base_config;       // the trials' config before their values, without `tune`
  TuneOptions options;
  uint64_t seed = 1;
  int64_t cores = 1;  // divided among parallel trials
  /// Checks a trial's config as `kiln train` would (throws ConfigError).
  std::function<void(const RawConfig&)> check_config;
  std::function<std::string()> now;  // UTC, ISO 8601
  std::FILE* out = stdout;
};

}  // namespace kiln::tune
