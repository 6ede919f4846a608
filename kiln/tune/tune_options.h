#pragma once
// The `tune:` section of a config (docs/tuning.md): what a study optimises, how many trials it
// runs and how, and its search space. Registered as a config section (core/config_section.h),
// so that `kiln train` reads and checks it too, and leaves it be.
// Torch-free. Thread-safety: values.

#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config_section.h"
#include "kiln/core/mode.h"
#include "kiln/core/period.h"
#include "kiln/core/registry.h"
#include "kiln/tune/search_space.h"

namespace kiln::tune {

struct TuneOptions {
  std::string metric;  // "": train.monitor
  ModeOrAuto mode = ModeOrAuto::kAuto;
  int64_t trials = 20;
  std::optional<Period> time;
  int64_t parallel = 1;
  int64_t nproc = 1;            // processes per trial: above 1, each trial is a `kiln launch`
  std::optional<int64_t> seed;  // the sampler's; absent: the config's seed
  ComponentSpec sampler{"sampler", "tpe"};
  ComponentSpec pruner{"pruner", "none"};
  SearchSpace space;
  // A program each trial runs instead of `kiln train` (command_line.h); empty: kiln train.
  std::vector<std::string> command;
  // How long a trial told to stop (SIGTERM: pruned, failed, Ctrl-C) has before it is killed.
  Period kill_after{30, Period::Unit::kSeconds};
  void describe(Schema& s);
};

/// The `tune:` section of a read config; none when it has none.
std::optional<TuneOptions> tune_section(const ConfigSections& sections);

}  // namespace kiln::tune
