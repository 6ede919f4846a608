#include "kiln/board/board_api.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>

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

// Which rows metric_rows() sends: all, or per tag (beyond `max_points` rows) the first and last
// and each run's lowest and highest value.
std::vector<bool> kept_rows(const std::vector<run::MetricsRow>& rows, size_t max_points) {
  std::vector<bool> kept(rows.size(), true);
  if (max_points == 0) return kept;
  std::map<std::string_view, std::vector<size_t>> by_tag;
  for (size_t i = 0; i < rows.size(); ++i) by_tag[rows[i].tag].push_back(i);
  for (const auto& [tag, indices] : by_tag) {
    if (indices.size() <= max_points) continue;
    size_t runs = std::max<size_t>(max_points / 2, 1);
    for (size_t i : indices) kept[i] = false;
    kept[indices.front()] = kept[indices.back()] = true;
    for (size_t r = 0; r < runs; ++r) {
      size_t begin = indices.size() * r / runs, end = indices.size() * (r + 1) / runs;
      size_t low = indices[begin], high = indices[begin];
      for (size_t j = begin; j < end; ++j) {  // NaN compares false: it is never chosen
        if (rows[indices[j]].value < rows[low].value) low = indices[j];
        if (rows[indices[j]].value > rows[high].value) high = indices[j];
      }
      kept[low] = kept[high] = true;
    }
  }
  return kept;
}

bool rows_left_out(const std::vector<bool>& kept) {
  return std::find(kept.begin(), kept.end(), false) != kept.end();
}

// One tag's histograms as counts in kHistogramBins equal bins from the lowest value of any step
// to the highest: each bucket's count goes to the bin of its middle (its edges clipped to the
// step's min and max: TensorFlow's outer buckets reach to +-1e12 and beyond).
Json heat_map(const std::string& tag,
              const std::vector<const tensorboard::StoredHistogram*>& steps) {
  double low = steps.front()->min, high = steps.front()->max;
  for (const auto* histogram : steps) {
    low = std::min(low, histogram->min);
    high = std::max(high, histogram->max);
  }
  double span = high > low ? high - low : 1.0;
  Json step_numbers = Json::array(), counts = Json::array();
  for (const auto* histogram : steps) {
    std::vector<double> bins(kHistogramBins, 0.0);
    for (size_t i = 0; i < histogram->counts.size(); ++i) {
      double lower = i == 0 ? histogram->min : histogram->limits[i - 1];
      double upper = histogram->limits[i];
      double middle = (std::clamp(lower, histogram->min, histogram->max) +
                       std::clamp(upper, histogram->min, histogram->max)) /
                      2;
      auto bin = static_cast<int>((middle - low) / span * kHistogramBins);
      bins[size_t(std::clamp(bin, 0, kHistogramBins - 1))] += histogram->counts[i];
    }
    step_numbers.push_back(histogram->step);
    counts.push_back(bins);
  }
  return {{"tag", tag}, {"steps", step_numbers}, {"low", low}, {"high", high}, {"counts", counts}};
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

Json metric_rows(const std::string& run, int64_t from, size_t max_points) {
  run::MetricsSince since = run::read_metrics_since(run, from);
  std::vector<bool> kept = kept_rows(since.rows, max_points);
  Json rows = Json::array();
  for (size_t i = 0; i < since.rows.size(); ++i) {
    const run::MetricsRow& row = since.rows[i];
    if (kept[i])
      rows.push_back(Json::array({row.step, row.epoch, row.tag, row.value, row.wall_time}));
  }
  Json payload = {{"rows", std::move(rows)},
                  {"next", since.next},
                  {"restart", since.restart},
                  {"downsampled", rows_left_out(kept)}};
  if (!since.problem.empty()) payload["problem"] = since.problem;
  return payload;
}

Json run_details(const std::string& root, const std::vector<std::string>& runs) {
  Json details = Json::array();
  for (const std::string& name : runs) {
    std::optional<std::string> path = run_under(root, name);
    if (!path) continue;
    run::RunInfo info = run::read_run(*path);
    details.push_back({{"run", name},
                       {"status", info.status},
                       {"hparams", info.hparams},
                       {"final", info.final},
                       {"notes", info.notes},
                       {"problems", info.problems}});
  }
  return {{"runs", details}};
}

Json run_histograms(const std::string& run) {
  tensorboard::StoredHistograms stored = tensorboard::read_histograms(run + "/tensorboard/train");
  std::map<std::string, std::vector<const tensorboard::StoredHistogram*>> by_tag;
  for (const tensorboard::StoredHistogram& histogram : stored.histograms)
    by_tag[histogram.tag].push_back(&histogram);
  Json maps = Json::array();
  for (auto& [tag, steps] : by_tag) {
    if (steps.size() > kHistogramSteps) steps.erase(steps.begin(), steps.end() - kHistogramSteps);
    maps.push_back(heat_map(tag, steps));
  }
  return {{"histograms", maps}, {"problems", stored.problems}};
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
