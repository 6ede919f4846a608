#include "kiln/board/board_api.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "kiln/core/error.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/run/metrics_csv.h"
#include "kiln/run/run_info.h"
#include "kiln/run/run_table.h"
#include "kiln/tensorboard/event_reader.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

// Whether `path` is `root` or lies under it, both canonical.
bool is_within(const fs::path& root, const fs::path& path) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

}  // namespace

std::optional<std::string> run_under(const std::string& root, const std::string& relative) {
  if (relative.empty() || fs::path(relative).is_absolute()) return std::nullopt;
  std::error_code error;
  fs::path base = fs::canonical(root, error);
  if (error) return std::nullopt;
  fs::path run = fs::canonical(base / relative, error);
  if (error || !is_within(base, run)) return std::nullopt;
  std::vector<std::string> found = run::find_runs(run.string());
  if (found.size() != 1 || found.front() != run.string()) return std::nullopt;
  return run.string();
}

Json runs_payload(const std::string& root, const std::vector<run::RunFilter>& filters,
                  const std::string& sort) {
  // A run reached through a link out of the root is not served, so it is not listed either.
  fs::path base = fs::canonical(root);
  std::vector<std::string> inside;
  for (const std::string& path : run::find_runs(root))
    if (is_within(base, fs::canonical(path))) inside.push_back(path);
  std::vector<run::RunInfo> all = run::read_runs(inside);
  Json payload = {{"keys", run::known_keys(all)}};
  std::vector<run::RunInfo> listed = run::filtered(all, filters);
  if (!sort.empty()) run::sort_runs(listed, sort);
  std::vector<std::string> columns = run::table_columns(listed);
  payload["columns"] = columns;
  payload["runs"] = Json::array();
  for (const run::RunInfo& run : listed) {
    Json cells = Json::array();
    for (const std::string& column : columns) cells.push_back(run::cell_text(run, column));
    payload["runs"].push_back({{"run", fs::relative(fs::canonical(run.path), base).string()},
                               {"cells", cells},
                               {"status", run.status},
                               {"problems", run.problems}});
  }
  return payload;
}

Json metric_rows(const std::string& run, int64_t from) {
  run::MetricsSince since = run::read_metrics_since(run, from);
  Json rows = Json::array();
  for (const run::MetricsRow& row : since.rows)
    rows.push_back(Json::array({row.step, row.epoch, row.tag, row.value, row.wall_time}));
  Json payload = {{"rows", rows}, {"next", since.next}, {"restart", since.restart}};
  if (!since.problem.empty()) payload["problem"] = since.problem;
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
  return run::read_run_text(run, name);
}

}  // namespace kiln::board
