#include "kiln/io/convert_csv.h"

#include "kiln/io/example.h"

namespace kiln::io {
namespace {

Feature cell_feature(const std::string& cell, CsvType type) {
  if (cell.empty()) return Feature{};
  int64_t integer = 0;
  double number = 0;
  switch (type) {
    case CsvType::kInt64:
      parse_int64(cell, integer);
      return int64_feature({integer});
    case CsvType::kFloat:
      parse_double(cell, number);
      return float_feature({static_cast<float>(number)});
    case CsvType::kText:
      break;
  }
  return bytes_feature({cell});
}

}  // namespace

void convert_csv(const CsvTable& table, ShardedTfRecordWriter& out,
                 const ConvertProgress& progress) {
  std::vector<CsvType> types;
  for (size_t c = 0; c < table.header.size(); ++c) types.push_back(infer_column_type(table, c));
  auto total = static_cast<int64_t>(table.rows.size());
  for (int64_t r = 0; r < total; ++r) {
    Example example;
    const auto& row = table.rows[static_cast<size_t>(r)];
    for (size_t c = 0; c < row.size(); ++c)
      example.features[table.header[c]] = cell_feature(row[c], types[c]);
    out.write(encode_example(example));
    if (progress) progress(r + 1, total);
  }
}

}  // namespace kiln::io
