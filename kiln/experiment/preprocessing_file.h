#pragma once
// preprocessing.json: a tabular run's fitted feature columns, saved in the run folder, in each
// checkpoint and in each export's version, and read back by whatever rebuilds those columns (a
// resumed run, open_model, an export). Thread-safety: functions of their arguments.

#include <string>

#include "kiln/core/json.h"

namespace kiln::experiment {

/// The preprocessing.json of `folder` (a run, a checkpoint or an export's version).
std::string preprocessing_file(const std::string& folder);

/// The preprocessing.json of `folder`, checked to rebuild its feature columns (a DataError naming
/// the file when it does not); null when the folder has none. This is the file's one reader.
Json read_preprocessing(const std::string& folder);

}  // namespace kiln::experiment
