#include "kiln/run/metrics_csv.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <functional>
#include <sstream>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/run/run_directory.h"

namespace kiln::run {
namespace {

// What a reader of metrics.csv holds at once: rows are read in pieces this long (a row is some
// 60 bytes; a row longer than this is not one kiln writes, and ends the read).
constexpr size_t kMetricsChunkBytes = size_t{4} << 20;

// A cell as the writer formats a number ({:g}: no hexadecimal, no spaces, nan and inf as words).
bool number_cell(std::string_view cell, double& value) {
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  return !cell.empty() && error == std::errc() && end == cell.data() + cell.size();
}

bool whole_cell(std::string_view cell, int64_t& value) {
  auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  return !cell.empty() && error == std::errc() && end == cell.data() + cell.size() && value >= 0;
}

bool is_name_text(std::string_view cell) {
  return is_valid_utf8(cell) && std::none_of(cell.begin(), cell.end(), [](char c) {
           return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
         });
}

enum class RowRead { kRow, kHeader, kDamaged };

// Says what is wrong with a row, when asked (`problem` given): the board skips damage without
// asking, since a message made and thrown per row made 2 million damaged rows take 5.8 s, not 0.5.
bool damaged(std::string* problem, const std::function<std::string()>& why) {
  if (problem) *problem = why();
  return false;
}

bool number_or_say(std::string_view cell, const char* column, double& value, std::string* problem) {
  return number_cell(cell, value) || damaged(problem, [&] {
           return fmt::format("{} \"{}\" is not a number", column, cell.substr(0, 40));
         });
}

// The cells of `line`, checked; views into the line.
RowRead read_cells(std::string_view line, MetricsCells& out, std::string* problem) {
  if (line == kMetricsHeader) return RowRead::kHeader;
  std::string_view cells[6];
  size_t count = 0, start = 0;
  for (size_t at = 0; at <= line.size(); ++at) {
    if (at < line.size() && line[at] != ',') continue;
    if (count < 6) cells[count] = line.substr(start, at - start);
    ++count;
    start = at + 1;
  }
  bool fine =
      (count == 6 ||
       damaged(problem, [&] { return fmt::format("a row of {} cells, not 6", count); })) &&
      ((is_name_text(cells[2]) && is_name_text(cells[3])) ||
       damaged(problem, [] { return "a split or metric name that is not UTF-8 text"; })) &&
      (!cells[3].empty() || damaged(problem, [] { return "a row without its metric's name"; })) &&
      (whole_cell(cells[0], out.step) || damaged(problem,
                                                 [&] {
                                                   return fmt::format(
                                                       "step \"{}\" is not a whole number >= 0",
                                                       cells[0].substr(0, 40));
                                                 })) &&
      number_or_say(cells[1], "epoch", out.epoch, problem) &&
      number_or_say(cells[4], "value", out.value, problem) &&
      number_or_say(cells[5], "wall_time", out.wall_time, problem);
  if (!fine) return RowRead::kDamaged;
  out.split = cells[2];
  out.metric = cells[3];
  return RowRead::kRow;
}

// The cells of `line`, checked; nothing for the header; std::invalid_argument saying what is
// wrong with a damaged row.
std::optional<MetricsCells> parse_metrics_cells(std::string_view line) {
  MetricsCells cells;
  std::string problem;
  RowRead read = read_cells(line, cells, &problem);
  if (read == RowRead::kDamaged) throw std::invalid_argument(problem);
  if (read == RowRead::kHeader) return std::nullopt;
  return cells;
}

MetricsRow row_of(const MetricsCells& cells) {
  std::string tag;
  tag.reserve(cells.split.size() + 1 + cells.metric.size());
  tag.append(cells.split).append("/").append(cells.metric);
  return {cells.step, cells.epoch, std::move(tag), cells.value, cells.wall_time};
}

}  // namespace

// Cells are views into the line: a board reading a million rows makes no string per cell.
std::optional<MetricsRow> parse_metrics_row(std::string_view line) {
  std::optional<MetricsCells> cells = parse_metrics_cells(line);
  if (!cells) return std::nullopt;
  return row_of(*cells);
}

MetricsCsv::MetricsCsv(const std::string& path) : path_(path) { open(); }

void MetricsCsv::open() {
  out_.open(path_, std::ios::app);
  if (!out_) throw IoError("open", path_, errno);
  out_.seekp(0, std::ios::end);
  if (out_.tellp() == 0) out_ << kMetricsHeader << "\n";
}

void MetricsCsv::append(int64_t step, double epoch, const std::string& tag, double value,
                        double wall_time) {
  size_t slash = tag.find('/');
  std::string split = slash == std::string::npos ? "" : tag.substr(0, slash);
  std::string metric = slash == std::string::npos ? tag : tag.substr(slash + 1);
  out_ << fmt::format("{},{:.6g},{},{},{:.9g},{:.3f}\n", step, epoch, split, metric, value,
                      wall_time);
  out_.flush();
}

void MetricsCsv::truncate_after(int64_t step) {
  out_.close();  // trimming replaces the file: the stream would write into the old one
  trim_metrics(path_, step);
  open();
}

void trim_metrics(const std::string& path, int64_t step) {
  if (!std::filesystem::exists(path)) return;
  std::istringstream in(read_text_file(path));
  std::string line, kept;
  bool header = true;
  while (std::getline(in, line)) {
    if (header || line.empty()) {
      kept += line + "\n";
      header = false;
      continue;
    }
    // A row cut short by a crash lacks cells; it is dropped with the later ones.
    bool complete = std::count(line.begin(), line.end(), ',') == 5;
    std::optional<int64_t> row_step = digits_value(line.substr(0, line.find(',')));
    if (complete && row_step && *row_step <= step) kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

namespace {

// The first line of metrics.csv, which `tail` holds when it starts at the file's start.
std::string metrics_header(const std::string& path, const FilePart& tail) {
  std::string start =
      tail.from == 0 ? tail.bytes : read_file_part(path, 0, kMetricsHeader.size() + 1)->bytes;
  return start.substr(0, start.find('\n'));
}

}  // namespace

MetricsTail read_metrics_tail(const std::string& path, int64_t max_bytes) {
  MetricsTail tail;
  std::optional<FilePart> part;
  try {
    part = read_file_part(path, -max_bytes);
  } catch (const Error& e) {  // a FIFO, a device: never waited on, never read
    tail.unreadable = e.what();
    return tail;
  }
  tail.missing = !part;
  if (!part) return tail;
  std::string header = metrics_header(path, *part);
  if (header != kMetricsHeader) {
    tail.unreadable = fmt::format("metrics.csv: its header is {}, not {}",
                                  show_value(Json(header.substr(0, 80))), kMetricsHeader);
    return tail;
  }
  const std::string& text = part->bytes;
  tail.bytes = static_cast<int64_t>(text.size());
  tail.partial = part->from > 0;
  size_t whole = text.rfind('\n') + 1;  // 0 without a newline
  tail.ends_cut_short = whole < text.size();
  size_t at = tail.partial ? text.find('\n') + 1 : 0;  // past a partial first line
  for (; at < whole; at = text.find('\n', at) + 1) {
    try {
      std::optional<MetricsRow> row =
          parse_metrics_row(std::string_view(text).substr(at, text.find('\n', at) - at));
      if (row) tail.rows.push_back(std::move(*row));
    } catch (const std::invalid_argument& e) {
      tail.damaged_row =
          fmt::format("metrics.csv, byte {}: {}", part->from + int64_t(at), e.what());
      break;
    }
  }
  return tail;
}

MetricsSince read_metrics_since(const std::string& run, int64_t from) {
  std::vector<MetricsRow> rows;
  MetricsSince since = read_metrics_since(
      run, from, [&rows](const MetricsCells& cells) { rows.push_back(row_of(cells)); });
  since.rows = std::move(rows);
  return since;
}

namespace {

// Each whole row from since.next on, in pieces of kMetricsChunkBytes: a file of a million rows is
// never held whole.
void take_rows_from(const std::string& path, MetricsSince& since,
                    const std::function<void(const MetricsCells&)>& take) {
  while (std::optional<FilePart> chunk = read_file_part(path, since.next, kMetricsChunkBytes)) {
    std::string_view text = chunk->bytes;
    size_t whole = text.rfind('\n');
    if (whole == std::string_view::npos) break;  // no whole row yet (or one past any chunk)
    MetricsCells cells;
    for (size_t at = 0; at <= whole;) {
      size_t end = text.find('\n', at);
      // kiln runs names the damage; a chart skips it.
      if (read_cells(text.substr(at, end - at), cells, nullptr) == RowRead::kRow) take(cells);
      at = end + 1;
    }
    since.next += static_cast<int64_t>(whole + 1);
    if (text.size() < kMetricsChunkBytes) break;  // the end of the file as it stood
  }
}

}  // namespace

std::optional<FileVersion> metrics_version(const std::string& run) {
  struct stat status {};
  std::string path = run + "/" + kMetricsFile;
  if (::lstat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  return FileVersion{int64_t(status.st_ino), int64_t(status.st_size),
                     int64_t(status.st_ctim.tv_sec) * 1000000000 + status.st_ctim.tv_nsec};
}

MetricsSince read_metrics_since(const std::string& run, int64_t from,
                                const std::function<void(const MetricsCells&)>& take) {
  std::string path = run + "/" + kMetricsFile;
  MetricsSince since;
  // From the byte before `from`: where the reader stopped is the start of a row unless a resume
  // cut the file back and it grew again, so a position past the end or not after a newline
  // starts over.
  std::optional<FilePart> part;
  try {
    part = read_file_part(path, std::max<int64_t>(0, from - 1), 1);
  } catch (const Error& e) {  // not a regular file: never waited on, never read
    since.problem = e.what();
    return since;
  }
  if (!part) return since;
  if (from > 0 && (from > part->size || part->bytes.empty() || part->bytes[0] != '\n')) {
    since.restart = true;
    from = 0;
  }
  since.next = from;
  try {
    take_rows_from(path, since, take);
  } catch (const Error& e) {  // replaced meanwhile by what is no regular file
    since.problem = e.what();
  }
  return since;
}

}  // namespace kiln::run
