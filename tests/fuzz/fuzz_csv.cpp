// CSV tables (csv datasets, `kiln data convert`). The first byte picks the delimiter and whether
// rows of the wrong width are skipped; the rest is the file. A parsed table must keep the
// promises csv.h makes: every row as wide as the header, one offset and one row number per row,
// in order, inside the text.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.h"
#include "kiln/io/csv.h"

namespace {

bool consistent(const kiln::io::CsvTable& table, size_t text_size) {
  if (table.row_offsets.size() != table.rows.size()) return false;
  if (table.row_numbers.size() != table.rows.size()) return false;
  for (size_t r = 1; r < table.row_numbers.size(); ++r)
    if (table.row_numbers[r] <= table.row_numbers[r - 1]) return false;
  if (table.skipped_rows > 0 && table.first_skipped.empty()) return false;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (table.rows[r].size() != table.header.size()) return false;
    if (table.row_offsets[r] < 0 || static_cast<size_t>(table.row_offsets[r]) >= text_size ||
        (r > 0 && table.row_offsets[r] <= table.row_offsets[r - 1]))
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr char kDelimiters[] = {',', ';', '\t', '|'};
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  kiln::io::CsvTable table;
  try {
    table = kiln::io::parse_csv(text, "fuzz.csv", kDelimiters[data[0] & 3], (data[0] & 4) != 0);
  } catch (const kiln::Error&) {
    return 0;
  }
  if (!consistent(table, text.size())) {
    std::fprintf(stderr, "a parsed CSV table breaks csv.h's promises\n");
    std::abort();
  }
  for (size_t c = 0; c < table.header.size(); ++c) {
    kiln::io::infer_column_type(table, c);
    table.column(table.header[c]);  // the first column of that name, found without an error
  }
  return 0;
}
