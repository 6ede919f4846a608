#pragma once
// `kiln runs` output: one row per run (name, run id, status, start, duration, steps, the
// monitored metric's best, the final single-number validation and test values, and the config
// values that differ between the listed runs), as an aligned table, CSV or JSON; and
// `kiln runs compare`: config differences and metrics side by side.
// Thread-safety: functions of their arguments.

#include <string>
#include <vector>

#include "kiln/run/run_info.h"

namespace kiln::run {

/// The table's columns for these runs: fixed fields, then metric tags, then differing values.
std::vector<std::string> table_columns(const std::vector<RunInfo>& runs);
/// A cell as the table shows it ("" when the run has none).
std::string cell_text(const RunInfo& run, const std::string& column);

std::string runs_table(const std::vector<RunInfo>& runs);
std::string runs_csv(const std::vector<RunInfo>& runs);
/// An array with every field of every run (all tags and config values, problems).
std::string runs_json(const std::vector<RunInfo>& runs);

/// Config values that differ, then every single-number tag, one column per run.
std::string compare_table(const std::vector<RunInfo>& runs);

/// "1:02:03" / "4:05"; "" for an unknown (negative) duration.
std::string duration_text(double seconds);

}  // namespace kiln::run
