#pragma once
// A binary task that trains in a second, for end-to-end tests of whole runs: CSV rows `a,b,label`
// (label: a + b > 0) and the config of a small MLP over them.

#include <string>

#include "tests/support/temp_dir.h"

namespace kiln::testing {

/// `rows` rows; only label 0 when `one_class`.
std::string binary_rows(int rows, bool one_class = false);

/// The config `binary` training an MLP on `train_csv` (validating on `val_csv`) with SGD, batch
/// 20, followed by `more` (YAML lines: train, callbacks, ...).
std::string binary_config(const std::string& train_csv, const std::string& val_csv,
                          const std::string& more);

/// Trains that config on binary_rows(200) for 20 steps in `dir` with the kiln binary `kiln`, and
/// exports it into dir/models (the model folder dir/models/binary). Returns the run folder;
/// throws std::runtime_error with the command's output when a step fails.
std::string train_and_export_binary(const std::string& kiln, const TempDir& dir);

}  // namespace kiln::testing
