#pragma once
// Train cycles (docs/design.md §4 `stages:`): one run trains in stages, one after another, on the
// same weights, e.g. a frozen backbone first, then everything at a lower learning rate. The config
// outside `stages` is the starting point; stage i is stage i-1's config with entry i deep-merged
// over it (lists replace; a component whose `type` changes is replaced whole, so switching adam
// for sgd leaves no adam option behind). Every stage's config is checked like a whole config
// before any work starts, with errors at `stages[i].KEY`.
//
// A stage may change how the network is trained (optimizer, scheduler, loss, callbacks, train.max,
// freeze, lr_scales, periods, batching and transforms), not what is trained or measured: the
// weights carry over, so the model, the datasets, the metrics and the run-wide settings (seed,
// runtime, train.monitor/mode, train.deterministic) stay those of the whole run.
// Thread-safety: values.

#include <string>
#include <vector>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/experiment/experiment_config.h"

namespace kiln::experiment {

/// One train cycle: its merged, checked config and how to name its keys in errors.
struct Stage {
  size_t index = 0;
  size_t count = 1;  // stages in the run
  std::string name;  // "" for a run without stages
  ExperimentConfig config;
  Json entries = Json::array();  // the `stages` entries up to this one, names removed
  Origins origins;               // of the run's config

  bool staged() const { return !name.empty(); }
  /// "stage 2/3: finetune".
  std::string title() const;
  /// `error` from this stage's merged config, moved to `stages[j].PATH` when entry j (the last one
  /// up to this stage that sets PATH) gave the value, and saying which stage it was in.
  ConfigError locate(const ConfigError& error) const;
};

/// The run's stages: one per `stages` entry, or the config itself when there are none. Throws
/// ConfigError at `stages[i].KEY` for a merged config that does not check or a key a stage may
/// not change.
std::vector<Stage> plan_stages(const RawConfig& raw, const ExperimentConfig& config);

/// Deep-merges a stage entry over a config tree: as deep_merge, except that a component given a
/// different `type` is replaced whole, and a component written as its name alone (`adam`) takes
/// options from a mapping without `type`.
void merge_stage(Json& base, const Json& overlay);

/// The keys a stage may set (prefixes: `train.max`, `optimizer`, ...).
const std::vector<std::string>& stage_keys();

}  // namespace kiln::experiment
