#include "kiln/data/csv_derived.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::data {
namespace {

io::Feature cell_feature(const std::string& text) {
  int64_t integer = 0;
  double number = 0;
  if (text.empty()) return {};
  if (io::parse_int64(text, integer)) return io::int64_feature({integer});
  if (io::parse_double(text, number)) return io::float_feature({static_cast<float>(number)});
  return io::bytes_feature({text});
}

std::string cell_text(const io::Feature& feature) {
  switch (feature.kind) {
    case io::Feature::Kind::kInt64:
      return std::to_string(feature.ints[0]);
    case io::Feature::Kind::kFloat:
      return fmt::format("{}", feature.floats[0]);
    case io::Feature::Kind::kBytes:
      return feature.bytes[0];
    case io::Feature::Kind::kNone:
      break;
  }
  return "";
}

}  // namespace

void add_derived_columns(io::CsvTable& table, const tabular::DerivedFeatures& derived) {
  if (derived.empty()) return;
  std::vector<std::string> names = derived.names();
  std::vector<size_t> columns;  // where each derived feature goes, in order
  for (const std::string& name : names) {
    auto found = std::find(table.header.begin(), table.header.end(), name);
    columns.push_back(size_t(found - table.header.begin()));
    if (found == table.header.end()) table.header.push_back(name);
  }
  io::Features features;  // every column set anew for each row
  for (size_t r = 0; r < table.rows.size(); ++r) {
    std::vector<std::string>& row = table.rows[r];
    row.resize(table.header.size());
    for (size_t c = 0; c < row.size(); ++c) features[table.header[c]] = cell_feature(row[c]);
    derived.apply(features, {table.name, table.row_numbers[r], table.row_offsets[r]});
    for (size_t d = 0; d < names.size(); ++d) row[columns[d]] = cell_text(features.at(names[d]));
  }
}

}  // namespace kiln::data
