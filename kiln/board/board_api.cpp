#include "kiln/board/board_api.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "kiln/core/error.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/runs/run_info.h"
#include "kiln/runs/run_table.h"
#include "kiln/tensorboard/event_reader.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

const char* const kRunTexts[] = {"config.yaml", "notes.md", "summary.json", "run.json",
                                 "train.log"};

// Whether `path` is `root` or lies under it, both canonical.
bool is_within(const fs::path& root, const fs::path& path) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

// One metrics.csv row as [step, epoch, "split/metric", value, wall_time]; null when damaged.
Json row_json(const std::string& line) {
  try {
    std::optional<runs::MetricsRow> row = runs::parse_metrics_row(line);
    if (!row) return nullptr;
    return Json::array({row->step, row->epoch, row->tag, row->value, row->wall_time});
  } catch (const std::exception&) {
    return nullptr;
  }
}

}  // namespace

std::optional<std::string> run_under(const std::string& root, const std::string& relative) {
  if (relative.empty() || fs::path(relative).is_absolute()) return std::nullopt;
  std::error_code error;
  fs::path base = fs::canonical(root, error);
  if (error) return std::nullopt;
  fs::path run = fs::canonical(base / relative, error);
  if (error || !is_within(base, run)) return std::nullopt;
  std::vector<std::string> found = runs::find_runs(run.string());
  if (found.size() != 1 || found.front() != run.string()) return std::nullopt;
  return run.string();
}

Json runs_payload(const std::string& root, const std::vector<runs::RunFilter>& filters,
                  const std::string& sort) {
  // A run reached through a link out of the root is not served, so it is not listed either.
  fs::path base = fs::canonical(root);
  std::vector<std::string> inside;
  for (const std::string& path : runs::find_runs(root))
    if (is_within(base, fs::canonical(path))) inside.push_back(path);
  std::vector<runs::RunInfo> all = runs::read_runs(inside);
  Json payload = {{"keys", runs::known_keys(all)}};
  std::vector<runs::RunInfo> listed = runs::filtered(all, filters);
  if (!sort.empty()) runs::sort_runs(listed, sort);
  std::vector<std::string> columns = runs::table_columns(listed);
  payload["columns"] = columns;
  payload["runs"] = Json::array();
  for (const runs::RunInfo& run : listed) {
    Json cells = Json::array();
    for (const std::string& column : columns) cells.push_back(runs::cell_text(run, column));
    payload["runs"].push_back({{"run", fs::relative(fs::canonical(run.path), base).string()},
                               {"cells", cells},
                               {"status", run.status},
                               {"problems", run.problems}});
  }
  return payload;
}

Json metric_rows(const std::string& run, int64_t from) {
  std::string path = run + "/metrics.csv";
  Json payload = {{"rows", Json::array()}, {"next", 0}, {"restart", false}};
  // From the byte before `from`: where the page stopped is the start of a row unless a resume
  // cut the file back and it grew again, so a position past the end or not after a newline
  // starts over.
  std::optional<FilePart> part;
  try {
    part = read_file_part(path, std::max<int64_t>(0, from - 1));
  } catch (const Error& e) {  // not a regular file: the run is listed with the problem already
    payload["problem"] = e.what();
    return payload;
  }
  if (!part) return payload;
  if (from > 0 && (from > part->size || part->bytes.empty() || part->bytes[0] != '\n')) from = -1;
  if (from < 0) {
    payload["restart"] = true;
    from = 0;
    part = read_file_part(path, 0);
    if (!part) return payload;
  }
  std::string text = part->bytes.substr(static_cast<size_t>(from - part->from));
  size_t whole = text.rfind('\n');
  size_t used = whole == std::string::npos ? 0 : whole + 1;
  std::istringstream lines(text.substr(0, used));
  for (std::string line; std::getline(lines, line);) {
    Json row = row_json(line);
    if (!row.is_null()) payload["rows"].push_back(std::move(row));
  }
  payload["next"] = from + static_cast<int64_t>(used);
  return payload;
}

Json run_images(const std::string& run) {
  tensorboard::StoredImages stored = tensorboard::read_images(run + "/tensorboard/val");
  std::map<std::string, const tensorboard::StoredImage*> latest;  // files are read in order
  for (const tensorboard::StoredImage& image : stored.images) latest[image.tag] = &image;
  Json images = Json::array();
  for (const auto& [tag, image] : latest)
    images.push_back({{"tag", tag}, {"step", image->step}, {"png", base64_encode(image->png)}});
  return {{"images", images}, {"problems", stored.problems}};
}

std::optional<std::string> run_text(const std::string& run, const std::string& name) {
  for (const char* allowed : kRunTexts)
    if (name == allowed) return read_text_file_if_any(run + "/" + name);
  return std::nullopt;
}

}  // namespace kiln::board
