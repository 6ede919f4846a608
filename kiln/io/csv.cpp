#include "kiln/io/csv.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "kiln/core/error.h"
#include "kiln/core/parallel.h"
#include "kiln/core/text_codec.h"
#include "kiln/io/file_bytes.h"

namespace kiln::io {
namespace {

// Splits text into rows of cells, one pass, tracking where each row starts.
class CsvScanner {
 public:
  CsvScanner(std::string_view text, const std::string& name, char delimiter)
      : text_(text), name_(name), delimiter_(delimiter) {}

  /// The next row's cells, or false at the end of the text.
  bool next_row(std::vector<std::string>& cells, int64_t& row_offset) {
    cells.clear();
    if (position_ >= text_.size()) return false;
    row_offset = static_cast<int64_t>(position_);
    ++row_;
    for (;;) {
      cells.push_back(read_cell(row_offset));
      if (position_ >= text_.size()) return true;
      char c = text_[position_++];
      if (c == delimiter_) continue;
      if (c == '\r' && position_ < text_.size() && text_[position_] == '\n') ++position_;
      return true;
    }
  }

 private:
  std::string read_cell(int64_t row_offset) {
    if (position_ < text_.size() && text_[position_] == '"') return read_quoted(row_offset);
    size_t start = position_;
    while (position_ < text_.size() && !ends_cell(text_[position_])) ++position_;
    return std::string(text_.substr(start, position_ - start));
  }

  std::string read_quoted(int64_t row_offset) {
    size_t opening = position_++;
    std::string cell;
    for (;;) {
      if (position_ >= text_.size())
        throw DataError(name_, row_, static_cast<int64_t>(opening),
                        "a quoted cell is never closed (the row starts at byte " +
                            std::to_string(row_offset) + ")");
      char c = text_[position_++];
      if (c != '"') {
        cell += c;
      } else if (position_ < text_.size() && text_[position_] == '"') {
        cell += '"';
        ++position_;
      } else {
        break;
      }
    }
    if (position_ < text_.size() && !ends_cell(text_[position_]))
      throw DataError(name_, row_, static_cast<int64_t>(position_),
                      "text after the closing quote of a cell");
    return cell;
  }

  bool ends_cell(char c) const { return c == delimiter_ || c == '\n' || c == '\r'; }

 public:
  /// Where the scan stands: the start of the next row.
  size_t position() const { return position_; }

 private:
  std::string_view text_;
  const std::string& name_;
  char delimiter_;
  size_t position_ = 0;
  int64_t row_ = -2;  // the header is row -1, the first data row 0
};

// Reads `scanner`'s rows into `table` (whose header is set), numbering them from `row`; a row of
// the wrong width is a DataError or, with `skip_bad_rows`, left out and counted. Offsets are the
// scanner's plus `base`.
void read_rows(CsvScanner& scanner, CsvTable& table, bool skip_bad_rows, int64_t row,
               int64_t base) {
  std::vector<std::string> cells;
  cells.reserve(table.header.size());
  int64_t offset = 0;
  while (scanner.next_row(cells, offset)) {
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    if (cells.size() != table.header.size()) {
      DataError wrong(
          table.name, row, base + offset,
          fmt::format("the row has {} cells, the header {}", cells.size(), table.header.size()));
      if (!skip_bad_rows) throw wrong;
      if (table.skipped_rows++ == 0) table.first_skipped = wrong.what();
    } else {
      table.rows.push_back(std::move(cells));
      table.row_offsets.push_back(base + offset);
      table.row_numbers.push_back(row);
    }
    ++row;
    cells = {};
    cells.reserve(table.header.size());
  }
}

// Files this large, without quotes, are split at line ends and their parts read on all cores.
constexpr size_t kParallelBytes = size_t(1) << 20;

// The rows of `body` (which begins at byte `base`) read in parts on several threads, or nothing
// when a part holds a row of the wrong width: the one-thread read then names the first. Only for
// text without quotes, where every line end ends a row.
std::optional<std::vector<CsvTable>> read_parts(std::string_view body, int64_t base,
                                                const CsvTable& headed, char delimiter) {
  size_t threads = pass_thread_count();
  std::vector<size_t> starts = {0};
  for (size_t t = 1; t < threads; ++t) {
    size_t cut = body.find('\n', std::max(starts.back(), body.size() * t / threads));
    if (cut == std::string_view::npos) break;
    starts.push_back(cut + 1);
  }
  starts.push_back(body.size());
  std::vector<CsvTable> parts(starts.size() - 1, headed);
  std::vector<char> failed(parts.size(), 0);
  auto read = [&](size_t p) {
    std::string_view part = body.substr(starts[p], starts[p + 1] - starts[p]);
    CsvScanner scanner(part, headed.name, delimiter);
    try {
      read_rows(scanner, parts[p], false, 0, base + int64_t(starts[p]));
    } catch (const DataError&) {
      failed[p] = 1;
    }
  };
  parallel_for(parts.size(), read);
  if (std::find(failed.begin(), failed.end(), 1) != failed.end()) return std::nullopt;
  return parts;
}

// The parts' rows appended to `table`, numbered on from its own.
void append_parts(CsvTable& table, std::vector<CsvTable>& parts) {
  size_t total = table.rows.size();
  for (const CsvTable& part : parts) total += part.rows.size();
  table.rows.reserve(total);
  table.row_offsets.reserve(total);
  table.row_numbers.reserve(total);
  for (CsvTable& part : parts) {
    for (auto& row : part.rows) {
      table.row_numbers.push_back(int64_t(table.rows.size()));
      table.rows.push_back(std::move(row));
    }
    table.row_offsets.insert(table.row_offsets.end(), part.row_offsets.begin(),
                             part.row_offsets.end());
  }
}

}  // namespace

size_t CsvTable::column(const std::string& column_name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == column_name) return i;
  std::string known;
  for (const auto& h : header) known += (known.empty() ? "" : ", ") + h;
  throw Error(fmt::format("{} has no column \"{}\"; its columns: {}", name, column_name, known));
}

namespace {

// The header's cells become feature names, which kiln writes into JSON (preprocessing.json,
// data stats, messages) and must read back: they are UTF-8 text without NUL.
void check_header_text(std::string_view header, const std::string& name) {
  if (size_t bad = first_invalid_utf8(header); bad != std::string::npos)
    throw DataError(name, -1, int64_t(bad),
                    fmt::format("the header holds byte 0x{:02x}, which is not UTF-8; column "
                                "names are text (save the file as UTF-8)",
                                static_cast<uint8_t>(header[bad])));
  if (size_t nul = header.find('\0'); nul != std::string_view::npos)
    throw DataError(name, -1, int64_t(nul),
                    "the header holds a NUL byte; a CSV file is UTF-8 text (is it UTF-16?)");
}

// A column is found by its name: of two of one name, one would be read and the other dropped
// in silence. (Columns without a name, as pandas writes an index, are read by nobody.)
void check_header_names(const std::vector<std::string>& header, const std::string& name) {
  std::map<std::string_view, size_t> seen;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty()) continue;
    auto [found, first] = seen.emplace(header[i], i);
    if (!first)
      throw DataError(name, -1, 0,
                      fmt::format("the header names column \"{}\" twice (columns {} and {})",
                                  header[i], found->second + 1, i + 1));
  }
}

}  // namespace

CsvTable parse_csv(std::string_view text, const std::string& name, char delimiter,
                   bool skip_bad_rows) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xef\xbb\xbf") text.remove_prefix(3);  // BOM
  CsvTable table{name, {}, {}, {}, {}, 0, ""};
  CsvScanner scanner(text, name, delimiter);
  int64_t offset = 0;
  if (!scanner.next_row(table.header, offset))
    throw DataError(name, -1, 0, "the file is empty; a CSV file starts with a header row");
  check_header_text(text.substr(0, scanner.position()), name);
  check_header_names(table.header, name);
  std::string_view body = text.substr(scanner.position());
  if (body.size() >= kParallelBytes && !skip_bad_rows && body.find('"') == std::string_view::npos) {
    if (auto parts = read_parts(body, int64_t(scanner.position()), table, delimiter)) {
      append_parts(table, *parts);
      return table;
    }
  }
  read_rows(scanner, table, skip_bad_rows, 0, 0);
  return table;
}

CsvTable read_csv(const std::string& path, char delimiter, bool skip_bad_rows) {
  std::string bytes = read_file_bytes(path);
  if (is_gzip(bytes)) bytes = gunzip(bytes, path);
  return parse_csv(bytes, path, delimiter, skip_bad_rows);
}

namespace {

// strtoll/strtod's reading, for what std::from_chars does not take: a leading '+', and numbers
// past the type's range (strtod reads 1e400 as infinity).
bool parse_int64_slowly(std::string_view cell, int64_t& out) {
  if (cell.size() > 20) return false;
  std::string text(cell);
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || std::isspace(uint8_t(text[0])))
    return false;
  out = value;
  return true;
}

bool parse_double_slowly(std::string_view cell, double& out) {
  // strtod also reads C's hexadecimal numbers ("0x10" as 16): a CSV cell is decimal or text.
  if (cell.find_first_of("xX") != std::string_view::npos) return false;
  std::string text(cell);
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || std::isspace(uint8_t(text[0]))) return false;
  out = value;
  return true;
}

}  // namespace

// std::from_chars first: it neither copies the cell nor consults the locale, several times
// faster than strtod on the numbers of a large CSV file.
bool parse_int64(std::string_view cell, int64_t& out) {
  if (cell.empty()) return false;
  const char* end = cell.data() + cell.size();
  auto [stop, problem] = std::from_chars(cell.data(), end, out);
  if (problem == std::errc() && stop == end) return true;
  return cell[0] == '+' && parse_int64_slowly(cell, out);
}

bool parse_double(std::string_view cell, double& out) {
  if (cell.empty()) return false;
  const char* end = cell.data() + cell.size();
  auto [stop, problem] = std::from_chars(cell.data(), end, out);
  if (problem == std::errc() && stop == end) return true;
  if (problem == std::errc::invalid_argument && cell[0] != '+') return false;
  return parse_double_slowly(cell, out);
}

CsvType infer_column_type(const CsvTable& table, size_t index) {
  bool any = false, all_int = true, all_number = true;
  for (const auto& row : table.rows) {
    const std::string& cell = row[index];
    if (cell.empty()) continue;
    any = true;
    int64_t i;
    double d;
    all_int = all_int && parse_int64(cell, i);
    all_number = all_number && parse_double(cell, d);
  }
  if (!any || !all_number) return CsvType::kText;
  return all_int ? CsvType::kInt64 : CsvType::kFloat;
}

}  // namespace kiln::io
