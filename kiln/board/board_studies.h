#pragma once
// The studies of `kiln tune` under a board's root, for the board and the report: every
// STUDY/study.db at any depth, read (never written) with its trials.
// Thread-safety: a function of its argument; it only reads files.

#include <string>

#include "kiln/core/json.h"

namespace kiln::board {

/// {"studies": [{"study": its folder relative to `root`, "name", "metric", "mode",
/// "parameters": [{"name", "log"}], "trials": [{"number", "state", "value" (null without one),
/// "values": {parameter: value}, "run": the trial's folder relative to `root`}]}, ...]}; a study
/// that cannot be read has "problem" instead of its trials.
Json studies_payload(const std::string& root);

}  // namespace kiln::board
