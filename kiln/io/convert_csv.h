#pragma once
// CSV to tf.Example records, as TFX's CsvExampleGen does it: one record per row, one feature per
// column named by the header, typed by the column's values (int64_list if every cell is an
// integer, float_list if every cell is a number, bytes_list otherwise); an empty cell becomes a
// feature with no value. Thread-safety: pure functions.

#include <string>

#include "kiln/io/convert_idx.h"
#include "kiln/io/csv.h"

namespace kiln::io {

/// Converts every row of `table` into `out`.
void convert_csv(const CsvTable& table, ShardedTfRecordWriter& out,
                 const ConvertProgress& progress = {});

}  // namespace kiln::io
