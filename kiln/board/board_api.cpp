#include "kiln/board/board_api.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "kiln/board/run_links.h"
#include "kiln/core/error.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/text_file.h"
#include "kiln/run/metrics_csv.h"
#include "kiln/run/run_directory.h"
#include "kiln/run/run_info.h"
#include "kiln/run/run_table.h"
#include "kiln/tensorboard/event_reader.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

// One row of a tag, and where it came in the file.
struct Point {
  int64_t step = 0;
  double epoch = 0, value = 0, wall_time = 0;
  size_t order = 0;
};

// A tag's rows thinned as they are read, in bounded memory: runs of `per_run` consecutive rows
// keep their lowest and highest value; when there are more runs than `most_runs`, neighbours
// merge and runs double in length. The first and last rows are kept apart. With most_runs 0
// every row is kept.
class ThinnedSeries {
 public:
  ThinnedSeries(std::string tag, size_t most_runs) : tag_(std::move(tag)), most_runs_(most_runs) {}

  void add(const Point& point) {
    if (seen_++ == 0) first_ = point;
    last_ = point;
    if (runs_.empty() || runs_.back().rows == per_run_) {
      runs_.push_back({point, point, 1});
    } else {
      Run& run = runs_.back();
      if (point.value < run.low.value) run.low = point;  // NaN compares false: never chosen
      if (point.value > run.high.value) run.high = point;
      run.rows += 1;
    }
    if (most_runs_ > 0 && runs_.size() > most_runs_) halve();
  }

  bool thinned() const { return per_run_ > 1; }

  /// The kept rows in file order, as the API's [step, epoch, tag, value, wall_time].
  void append_rows(Json& rows) const {
    std::vector<const Point*> kept = {&first_};
    for (const Run& run : runs_) {
      bool low_first = run.low.order <= run.high.order;
      kept.push_back(low_first ? &run.low : &run.high);
      kept.push_back(low_first ? &run.high : &run.low);
    }
    kept.push_back(&last_);
    size_t previous = SIZE_MAX;
    for (const Point* point : kept) {
      if (point->order == previous) continue;  // a run of one row, or the first or last again
      previous = point->order;
      rows.push_back(
          Json::array({point->step, point->epoch, tag_, point->value, point->wall_time}));
    }
  }

 private:
  struct Run {
    Point low, high;
    size_t rows = 0;
  };

  void halve() {
    std::vector<Run> merged;
    for (size_t i = 0; i + 1 < runs_.size(); i += 2) {
      const Run &a = runs_[i], &b = runs_[i + 1];
      merged.push_back({b.low.value < a.low.value ? b.low : a.low,
                        b.high.value > a.high.value ? b.high : a.high, a.rows + b.rows});
    }
    if (runs_.size() % 2 == 1) merged.push_back(runs_.back());  // still filling: per_run_ rows
    per_run_ *= 2;
    runs_ = std::move(merged);
  }

  std::string tag_;
  size_t most_runs_, per_run_ = 1, seen_ = 0;
  std::vector<Run> runs_;
  Point first_, last_;
};

// The rows from byte `from` on, thinned tag by tag (tags in the order they first appear).
std::pair<run::MetricsSince, std::vector<ThinnedSeries>> thinned_series(const std::string& run,
                                                                        int64_t from,
                                                                        size_t max_points) {
  std::vector<ThinnedSeries> series;
  std::unordered_map<std::string, size_t> index;
  std::string key;  // reused: looking a row's tag up allocates nothing
  size_t order = 0;
  run::MetricsSince since = run::read_metrics_since(run, from, [&](const run::MetricsCells& row) {
    key.assign(row.split).append("/").append(row.metric);
    auto [at, added] = index.try_emplace(key, series.size());
    if (added) series.emplace_back(key, max_points == 0 ? 0 : std::max<size_t>(max_points / 2, 1));
    series[at->second].add({row.step, row.epoch, row.value, row.wall_time, order++});
  });
  return {std::move(since), std::move(series)};
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
  if (error || !is_within(base, run) || !RunLinks::look(base, run)) return std::nullopt;
  std::vector<std::string> found = run::find_runs(run.string());
  if (found.size() != 1 || found.front() != run.string()) return std::nullopt;
  return run.string();
}

namespace {
// `relative` (as lexically_relative gives it: "." for the base itself) under `base`.
fs::path under(const fs::path& base, const fs::path& relative) {
  return relative == "." ? base : base / relative;
}
}  // namespace

std::vector<std::string> runs_inside(const std::string& root, RunLinks* links) {
  // A run reached through a link out of the root is not served, so it is not listed either.
  // find_runs does not descend through links to folders: only a run folder itself may be one,
  // and only then is its path resolved.
  fs::path base = fs::canonical(root);
  RunLinks fresh;
  if (!links) links = &fresh;
  std::vector<std::string> inside;
  for (const std::string& path : run::find_runs(root)) {
    std::error_code error;
    fs::path run = fs::symlink_status(path, error).type() == fs::file_type::symlink
                       ? fs::canonical(path, error)
                       : under(base, fs::path(path).lexically_relative(root));
    if (!error && is_within(base, run) && links->reads_stay_inside(base, run))
      inside.push_back(path);
  }
  return inside;
}

Json runs_payload(const std::string& root, const std::vector<run::RunFilter>& filters,
                  const std::string& sort) {
  return runs_table_payload(root, run::read_runs(runs_inside(root)), filters, sort);
}

Json runs_table_payload(const std::string& root, const std::vector<run::RunInfo>& all,
                        const std::vector<run::RunFilter>& filters, const std::string& sort) {
  fs::path base = fs::canonical(root);
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
  if (max_points == 0 || max_points > kMaxPointsPerTag) max_points = kMaxPointsPerTag;
  auto [since, series] = thinned_series(run, from, max_points);
  Json rows = Json::array();
  bool thinned = false;
  for (const ThinnedSeries& tag : series) {
    tag.append_rows(rows);
    thinned = thinned || tag.thinned();
  }
  Json payload = {{"rows", std::move(rows)},
                  {"next", since.next},
                  {"restart", since.restart},
                  {"downsampled", thinned}};
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
  try {
    return run::read_run_text(run, name);
  } catch (const DataError& e) {
    // Its message begins with the file's path on the server, which no reader is told: the
    // file's name instead ("is a folder", "is not a regular file", "is N bytes, more than ...").
    std::string why = e.what();  // "data error in PATH: PROBLEM"
    size_t at = why.find(e.file() + ":");
    throw UsageError(at == std::string::npos ? name + " cannot be shown"
                                             : name + why.substr(at + e.file().size() + 1));
  }
}

}  // namespace kiln::board
