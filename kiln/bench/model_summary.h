#pragma once
// What `kiln model summary` prints for a config: the model built for the data's example shape,
// or for a given shape, in which case only the config's model section is read; or for a trained
// run (or one of its checkpoints), opened without its data.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/config.h"

namespace kiln::bench {

/// "1,28,28" as sizes; throws UsageError naming `option` when it is not a list of positive sizes.
std::vector<int64_t> parse_shape(const std::string& text, const std::string& option);

/// The summary table of the model `raw` configures, for examples of `input` (default: the
/// training data's), rows no deeper than `max_depth` (< 0: all).
std::string model_summary_text(const RawConfig& raw,
                               const std::optional<std::vector<int64_t>>& input, int max_depth);

/// The summary table of the model of a run folder or checkpoint directory (open_model), for the
/// inputs it saved.
std::string run_model_summary_text(const std::string& run_or_checkpoint, int max_depth);

}  // namespace kiln::bench
