#include "kiln/core/text_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "kiln/core/text_codec.h"

namespace kiln {

std::string aligned_columns(const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::vector<std::string>> rows;  // cells as a terminal shows them
  for (const auto& row : cells) {
    rows.emplace_back();
    for (const std::string& cell : row) rows.back().push_back(terminal_text(cell));
  }
  std::vector<size_t> widths;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      widths.resize(std::max(widths.size(), row.size()));
      widths[i] = std::max(widths[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], widths[i]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace kiln
