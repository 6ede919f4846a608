#pragma once
// What model.yaml says of a version folder's kind, shared by the export that writes it
// (export.h) and the one reader that loads it (exported_model.h): the format names and version,
// and the reader section (how `kiln predict` reads files for the model). Thread-safety: values.

#include <cstdint>

#include "kiln/core/json.h"
#include "kiln/experiment/experiment_config.h"

namespace kiln::exports {

/// The version folder format model.yaml declares, and its version.
inline constexpr const char* kExportFormat = "kiln.export";
// 2: the version folder holds a MANIFEST of its files' checksums, verified at load.
inline constexpr int64_t kExportFormatVersion = 2;

/// model.yaml's `format` of a TorchScript version folder.
inline constexpr const char* kTorchScriptFormat = "torchscript";

/// The spec of the dataset a model was evaluated on (data.test, else data.val, else data.train)
/// without its files: model.yaml's `reader`, how `kiln predict` reads TFRecord and CSV files for
/// it. Null when the config names none.
Json evaluation_data_spec(const experiment::ExperimentConfig& config);

}  // namespace kiln::exports
