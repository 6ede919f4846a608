// median: stops a trial whose best value so far is worse than the median of what the other
// completed trials reported at the same step (as Optuna's MedianPruner), once `startup` trials have
// completed and the trial has trained `warmup` epochs.

#include <fmt/format.h>

#include <algorithm>

#include "kiln/tune/pruner.h"

namespace kiln::tune {
namespace {

struct MedianOptions {
  int64_t startup = 5;
  double warmup = 0;
  void describe(Schema& s) {
    s.field("startup", startup, "Completed trials before any is pruned.").min(0);
    s.field("warmup", warmup, "Epochs a trial trains before it can be pruned.").min(0);
  }
};

class MedianPruner : public Pruner {
 public:
  explicit MedianPruner(const MedianOptions& options) : options_(options) {}

  std::optional<std::string> prune(int64_t number, const std::vector<TrialRecord>& trials,
                                   bool maximize) const override {
    const TrialRecord& trial = trials.at(size_t(number));
    if (trial.reported.empty() || trial.reported.back().epoch < options_.warmup)
      return std::nullopt;
    int64_t completed = std::count_if(trials.begin(), trials.end(), [](const TrialRecord& t) {
      return t.state == TrialState::kComplete;
    });
    if (completed < options_.startup) return std::nullopt;
    int64_t step = trial.reported.back().step;
    std::vector<double> others;
    for (const TrialRecord& other : trials)
      if (other.number != number && other.state == TrialState::kComplete)
        if (auto value = value_at(other, double(step), false)) others.push_back(*value);
    if (others.empty()) return std::nullopt;
    std::sort(others.begin(), others.end());
    size_t n = others.size();
    double median = n % 2 ? others[n / 2] : 0.5 * (others[n / 2 - 1] + others[n / 2]);
    double best = trial.reported.front().value;
    for (const ReportedValue& r : trial.reported)
      if (better(r.value, best, maximize)) best = r.value;
    if (!better(median, best, maximize)) return std::nullopt;
    return fmt::format(
        "median: its best value {:.6g} is worse than the median {:.6g} of {} "
        "other trials at step {}",
        best, median, n, step);
  }

 private:
  MedianOptions options_;
};

}  // namespace

KILN_REGISTER(pruner_registry, "median", MedianPruner, MedianOptions,
              "Stops a trial worse than the median of the others at the same step.");

}  // namespace kiln::tune
