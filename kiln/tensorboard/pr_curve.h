#pragma once
// Precision-recall curves as TensorBoard's PR Curves tab reads them (the pr_curves plugin,
// docs/formats.md §3.6): a float tensor [6, n] of true positives, false positives, true
// negatives, false negatives, precision and recall at the thresholds i / (n - 1), worked out as
// TensorBoard's and PyTorch's writers do from scores counted into n equal buckets of [0, 1].
// Thread-safety: functions of their arguments.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tensorboard {

namespace proto {
class Event;
}

/// Thresholds of the curves kiln writes (PyTorch's add_pr_curve default).
constexpr int64_t kPrCurveThresholds = 127;

/// A binary classifier's scores (in [0, 1]) counted by bucket floor(score * (n - 1)), apart for
/// the examples that are positive and those that are not; both of one size n >= 2.
struct PrCurveCounts {
  std::vector<double> positives, negatives;
};

/// The six rows TensorBoard draws: tp, fp, tn, fn, precision, recall, each of n values.
std::array<std::vector<double>, 6> pr_curve_rows(const PrCurveCounts& counts);

proto::Event pr_curve_event(const std::string& tag, int64_t step, double wall_time,
                            const PrCurveCounts& counts);

}  // namespace kiln::tensorboard
