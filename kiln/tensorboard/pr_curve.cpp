#include "kiln/tensorboard/pr_curve.h"

#include <algorithm>
#include <cstring>

#include "kiln/core/error.h"
#include "kiln/tensorboard/proto/event.pb.h"

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
  proto::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  proto::Summary::Value& value = *event.mutable_summary()->add_value();
  value.set_tag(tag);
  proto::PrCurvePluginData plugin_data;
  plugin_data.set_version(0);
  plugin_data.set_num_thresholds(static_cast<uint32_t>(counts.positives.size()));
  auto& plugin = *value.mutable_metadata()->mutable_plugin_data();
  plugin.set_plugin_name("pr_curves");
  plugin.set_content(plugin_data.SerializeAsString());
  proto::TensorProto& tensor = *value.mutable_tensor();
  tensor.set_dtype(proto::DT_FLOAT);
  tensor.mutable_tensor_shape()->add_dim()->set_size(6);
  tensor.mutable_tensor_shape()->add_dim()->set_size(int64_t(rows[0].size()));
  std::string content;
  for (const std::vector<double>& row : rows)
    for (double number : row) {
      auto single = static_cast<float>(number);
      char bytes[sizeof single];
      std::memcpy(bytes, &single, sizeof single);  // little-endian on every platform kiln runs on
      content.append(bytes, sizeof bytes);
    }
  tensor.set_tensor_content(content);
  return event;
}

}  // namespace kiln::tensorboard
