// checkpoint: writes a checkpoint every period and keeps the newest `keep_last` and the best
// `keep_best` by a monitored tag, independently; checkpoints/best names the best. Which to keep
// is decided from what is on disk (each checkpoint's train_state.json holds the values logged
// when it was taken), so retention needs no state of its own and survives any crash.

#include <cmath>
#include <filesystem>
#include <set>

#include "kiln/core/remove_tree.h"
#include "kiln/engine/callback.h"
#include "kiln/engine/callbacks/monitor.h"
#include "kiln/engine/train_state.h"

namespace kiln::engine {
namespace {

struct CheckpointOptions {
  Period every{1, Period::Unit::kEpochs};
  int64_t keep_last = 3;
  int64_t keep_best = 1;
  MonitorOptions compare;
  void describe(Schema& s) {
    s.field("every", every, "How often to write a checkpoint.");
    s.field("keep_last", keep_last, "How many of the newest checkpoints to keep; 0 keeps all.")
        .min(0);
    s.field("keep_best", keep_best,
            "How many of the best checkpoints by `monitor` to keep as well; 0 keeps none for "
            "being best (checkpoints/best then names the best of those kept).")
        .min(0);
    compare.describe(s);
  }
};

class CheckpointCallback : public Callback {
 public:
  explicit CheckpointCallback(const CheckpointOptions& o) : options_(o) {}

  void check(const TrainOptions& train,
             const std::vector<std::string>& monitorable) const override {
    ResolvedMonitor(options_.compare, train, monitorable, config_path);
  }
  void on_fit_begin(TrainerView& view) override {
    compare_ = ResolvedMonitor(options_.compare, view.options(), view.monitorable(), config_path);
  }
  void on_step_end(TrainerView& view, const Progress& before) override {
    if (options_.every.crossed(before, view.progress())) view.request_checkpoint();
  }
  void on_checkpoint_saved(TrainerView& view, const std::string& dir) override {
    values_.erase(dir);  // a step saved again (at the end of a run) holds newer values
    apply_retention(view.checkpoints_dir());
  }

 private:
  // The monitored value a checkpoint was taken with; none before the tag was first measured, and
  // none for a damaged checkpoint (loading skips it too), which is then never kept as best.
  std::optional<double> monitored_value(const std::string& dir) {
    auto cached = values_.find(dir);
    if (cached != values_.end()) return cached->second;
    MetricValues last;
    try {
      last = read_train_state(dir).last;
    } catch (const Error&) {
      return values_[dir] = std::nullopt;
    }
    std::optional<double> value;
    auto measured = last.find(compare_.monitor);
    // A NaN (a diverged run, a metric not yet defined) ranks as no value: never kept as best.
    if (measured != last.end() && !std::isnan(measured->second)) value = measured->second;
    return values_[dir] = value;
  }

  void apply_retention(const std::string& checkpoints_dir) {
    std::vector<std::string> dirs = checkpoint_directories(checkpoints_dir);
    std::set<std::string> keep;
    size_t newest = options_.keep_last == 0 ? dirs.size() : size_t(options_.keep_last);
    for (size_t i = dirs.size() > newest ? dirs.size() - newest : 0; i < dirs.size(); ++i)
      keep.insert(dirs[i]);
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& dir : dirs)
      if (auto value = monitored_value(dir))
        ranked.emplace_back(compare_.mode == Mode::kMax ? -*value : *value, dir);
    // Ties go to the earlier checkpoint, as "best" means strictly better.
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < ranked.size() && i < size_t(options_.keep_best); ++i)
      keep.insert(ranked[i].second);
    for (const auto& dir : dirs)
      if (!keep.count(dir)) remove_checkpoint(dir);
    for (const auto& [score, dir] : ranked)
      if (keep.count(dir)) {
        write_pointer(checkpoints_dir, "best", std::filesystem::path(dir).filename().string());
        break;
      }
  }

  // Renamed out of the step-N names first, so that a crash part-way through the removal leaves a
  // temporary directory (ignored, and removed by the next resume), not a half checkpoint.
  void remove_checkpoint(const std::string& dir) {
    std::string doomed = dir + ".tmp";
    remove_tree(doomed);
    std::filesystem::rename(dir, doomed);
    remove_tree(doomed);
    values_.erase(dir);
  }

  CheckpointOptions options_;
  ResolvedMonitor compare_;  // set when fitting begins
  std::map<std::string, std::optional<double>> values_;
};

}  // namespace

KILN_REGISTER(callback_registry, "checkpoint", CheckpointCallback, CheckpointOptions,
              "Writes a checkpoint every period; keeps the newest keep_last and the best keep_best "
              "by a monitored tag; checkpoints/best names the best.");

}  // namespace kiln::engine
