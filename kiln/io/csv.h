#pragma once
// CSV files (RFC 4180): a header row, then rows of cells; quoted cells may hold the delimiter,
// doubled quotes and line breaks; CRLF or LF line ends. Cells stay text; callers type them
// (infer_column_type, or a dataset's declared columns). An empty cell is a missing value.
// Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io {

struct CsvTable {
  std::string name;  // the file, for errors
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<int64_t> row_offsets;  // byte offset where each row starts
  std::vector<int64_t> row_numbers;  // each row's number in the file (0 = first data row)
  int64_t skipped_rows = 0;          // rows of the wrong width left out (skip_bad_rows)
  std::string first_skipped;         // the first of them, as the error would have said

  /// Index of a header column; throws Error listing the columns when absent.
  size_t column(const std::string& column_name) const;
};

/// Parses CSV text; every row must have as many cells as the header, or with `skip_bad_rows` is
/// left out and counted. Throws DataError naming `name`, the row (0 = first data row) and the
/// byte offset.
CsvTable parse_csv(std::string_view text, const std::string& name, char delimiter = ',',
                   bool skip_bad_rows = false);
/// Reads and parses a CSV file (gzipped or not).
CsvTable read_csv(const std::string& path, char delimiter = ',', bool skip_bad_rows = false);

enum class CsvType { kInt64, kFloat, kText };

/// The narrowest type every non-empty cell of column `index` parses as; kText when there are
/// none.
CsvType infer_column_type(const CsvTable& table, size_t index);

/// Strict number parsing (the whole cell, no spaces); false when it is not one.
bool parse_int64(std::string_view cell, int64_t& out);
bool parse_double(std::string_view cell, double& out);

}  // namespace kiln::io
