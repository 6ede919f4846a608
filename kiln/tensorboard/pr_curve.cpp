#include "kiln/tensorboard/pr_curve.h"

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/tensorboard/proto/event.pb.h"
#include "kiln/tensorboard/summaries.h"

namespace kiln::tensorboard {
namespace {

// Keeps a threshold no example reaches from dividing by zero, as TensorBoard's writer does.
constexpr double kMinimumCount = 1e-7;

// Counts at each threshold i: the examples scored in bucket i or above.
std::vector<double> at_or_above(const std::vector<double>& buckets) {
  std::vector<double> sums(buckets.size());
  double sum = 0;
  for (size_t i = buckets.size(); i-- > 0;) sums[i] = sum += buckets[i];
  return sums;
}

}  // namespace

std::array<std::vector<double>, 6> pr_curve_rows(const PrCurveCounts& counts) {
  KILN_ASSERT(counts.positives.size() >= 2 && counts.positives.size() == counts.negatives.size());
  std::vector<double> tp = at_or_above(counts.positives), fp = at_or_above(counts.negatives);
  size_t n = tp.size();
  std::vector<double> tn(n), fn(n), precision(n), recall(n);
  for (size_t i = 0; i < n; ++i) {
    tn[i] = fp[0] - fp[i];
    fn[i] = tp[0] - tp[i];
    precision[i] = tp[i] / std::max(kMinimumCount, tp[i] + fp[i]);
    recall[i] = tp[i] / std::max(kMinimumCount, tp[i] + fn[i]);
  }
  return {tp, fp, tn, fn, precision, recall};
}

proto::Event pr_curve_event(const std::string& tag, int64_t step, double wall_time,
                            const PrCurveCounts& counts) {
  std::array<std::vector<double>, 6> rows = pr_curve_rows(counts);
  std::vector<double> values;
  for (const std::vector<double>& row : rows) values.insert(values.end(), row.begin(), row.end());
  proto::PrCurvePluginData plugin_data;
  plugin_data.set_version(0);
  plugin_data.set_num_thresholds(static_cast<uint32_t>(counts.positives.size()));
  return float_tensor_event(tag, step, wall_time, "pr_curves", plugin_data.SerializeAsString(),
                            {6, static_cast<int64_t>(rows[0].size())}, values);
}

}  // namespace kiln::tensorboard
