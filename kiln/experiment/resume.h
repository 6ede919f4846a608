#pragma once
// What `kiln train --resume` needs before any model is built (run/run_info.h finds the newest
// unfinished run of a config's name): the run's saved config with the resumable `--set`
// overrides applied (any other change is refused, naming the key), and the run's files trimmed
// back to the checkpoint it continues from, so nothing is logged twice.
// Thread-safety: one resume per run directory.

#include <string>
#include <vector>

#include "kiln/core/config.h"

namespace kiln::experiment {

/// The run's saved config with `overrides` (PATH=VALUE) applied; UsageError naming the first key
/// whose resolved value changes and is not one of resumable_keys().
RawConfig resume_config(const std::string& run_dir, const std::vector<std::string>& overrides);

/// `changed` (the run's saved config with changes from `source`: "--set", or config files given
/// with `--resume`) when it differs from the saved one only in resumable_keys(); else UsageError
/// naming `source` and the first key that differs.
RawConfig resumable_config(const std::string& run_dir, RawConfig changed,
                           const std::string& source);

/// The dotted paths at which two resolved configs differ (lists compare whole).
std::vector<std::string> changed_keys(const Json& before, const Json& after);

/// Removes checkpoint directories after `step` and unfinished temporary ones: they belong to the
/// attempt being replaced.
void remove_checkpoints_after(const std::string& checkpoints_dir, int64_t step);

}  // namespace kiln::experiment
