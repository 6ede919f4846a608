#pragma once
// Derived features (data.derived) over a CSV file's rows: computed once, when the file is read,
// into columns of their own, so that everything that reads the table after (the target, feature
// columns, numeric features) reads them as the file's own columns.
// Thread-safety: a function of its arguments.

#include "kiln/io/csv.h"
#include "kiln/tabular/derived_features.h"

namespace kiln::data {

/// Computes `derived` for every row of `table` into a column each, appended, or in place of the
/// column of the same name: a whole number in decimal, a fraction as the shortest text that reads
/// back as the same float, text as it is, a missing value as an empty cell. A row's cells are
/// read as the csv dataset reads them (a whole number, else a number, else text; empty:
/// missing). A DataError names the file, the row and the expression.
void add_derived_columns(io::CsvTable& table, const tabular::DerivedFeatures& derived);

}  // namespace kiln::data
