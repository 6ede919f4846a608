#pragma once
// Choosing and ordering runs by what they hold, for `kiln runs --filter/--sort` and the board:
// a key names a field (name, id, status, start, end, duration, steps, best, notes), a logged tag
// (val/accuracy: its latest value) or a config value (optimizer.lr). Filters are KEY=GLOB,
// KEY!=GLOB and KEY<N, KEY<=N, KEY>N, KEY>=N; numbers compare as numbers, text by glob (`*`, `?`).
// Thread-safety: values.

#include <optional>
#include <string>
#include <vector>

#include "kiln/run/run_info.h"

namespace kiln::run {

/// The value of `key` for `run`, or null when the run has none.
Json value_of(const RunInfo& run, const std::string& key);

struct RunFilter {
  std::string key, op, value;
  /// Parses `status=finished`, `val/accuracy>0.9`; throws UsageError naming the forms.
  static RunFilter parse(const std::string& text);
  /// A run without the key matches no filter but `!=`.
  bool matches(const RunInfo& run) const;
};

/// Runs matching every filter.
std::vector<RunInfo> filtered(std::vector<RunInfo> runs, const std::vector<RunFilter>& filters);

/// Sorted by `key` (a leading `-`: descending); runs without it go last, ties keep their order.
void sort_runs(std::vector<RunInfo>& runs, const std::string& key);

/// Every key some run has, for messages naming the valid keys.
std::vector<std::string> known_keys(const std::vector<RunInfo>& runs);

/// The config values that are not the same in every run with a readable config (absent counts
/// as a value).
std::vector<std::string> differing_hparams(const std::vector<RunInfo>& runs);

}  // namespace kiln::run
