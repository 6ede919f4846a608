#pragma once
// A binary task that trains in a second, for end-to-end tests of whole runs: CSV rows `a,b,label`
// (label: a + b > 0) and the config of a small MLP over them.

#include <string>

namespace kiln::testing {

/// `rows` rows; only label 0 when `one_class`.
std::string binary_rows(int rows, bool one_class = false);

/// The config `binary` training an MLP on `train_csv` (validating on `val_csv`) with SGD, batch
/// 20, followed by `more` (YAML lines: train, callbacks, ...).
std::string binary_config(const std::string& train_csv, const std::string& val_csv,
                          const std::string& more);

}  // namespace kiln::testing
