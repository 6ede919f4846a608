// confusion_matrix: how many examples of each true class were predicted as each class (argmax),
// reported cell by cell as confusion_matrix/true_T/pred_P counts (scikit-learn's
// confusion_matrix with labels 0..classes-1: rows true, columns predicted).

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "kiln/metrics/class_rows.h"
#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

class ConfusionMatrix : public Metric {
 public:
  explicit ConfusionMatrix(const NoOptions&) {}
  void reset() override {
    counts_.reset();
    outside_.reset();
  }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1 && output.size(0) == target.size(0),
               "confusion_matrix expects scores [batch, classes] and class indices [batch], got "
               "scores {} and targets {}",
               shape_of(output), shape_of(target));
    int64_t classes = output.size(1);
    KILN_CHECK(counts_.size() == 0 || counts_.size() == classes * classes,
               "confusion_matrix: outputs of {} classes after outputs of {}", classes,
               std::lround(std::sqrt(double(counts_.size()))));
    ClassRows rows = class_rows(target, classes, "confusion_matrix", outside_);
    // Added on the device, read when the metric is.
    counts_.add(counted(rows.index * classes + output.argmax(1), rows.weight, classes * classes));
  }
  /// The counts row by row (true class), classes x classes; empty before any update.
  std::vector<double> sums() const override {
    refuse_outside(outside_, classes(), "confusion_matrix");
    return counts_.read();
  }
  void set_sums(const std::vector<double>& sums) override { counts_.set(sums); }
  /// The fraction on the diagonal (accuracy), for callers that want one number.
  double value() const override {
    std::vector<double> counts = sums();
    double diagonal = 0, total = 0;
    int64_t n = classes();
    for (int64_t i = 0; i < n * n; ++i) (i / n == i % n ? diagonal : total) += counts[i];
    total += diagonal;
    return total > 0 ? diagonal / total : 0.0;
  }
  std::map<std::string, double> values() const override {
    std::vector<double> counts = sums();
    std::map<std::string, double> out;
    int64_t n = classes();
    for (int64_t i = 0; i < n * n; ++i) out[cell_key(i / n, i % n)] = counts[i];
    return out;
  }
  std::vector<std::string> value_keys() const override {
    std::set<std::string> keys;  // in the order values() gives them, without reading the counts
    int64_t n = classes();
    for (int64_t i = 0; i < n * n; ++i) keys.insert(cell_key(i / n, i % n));
    return {keys.begin(), keys.end()};  // none before the first batch tells the number of classes
  }

 private:
  int64_t classes() const { return std::lround(std::sqrt(double(counts_.size()))); }
  static std::string cell_key(int64_t truth, int64_t predicted) {
    return fmt::format("true_{}/pred_{}", truth, predicted);
  }

  DeviceCounts counts_;  // row by row, on the batches' device
  DeviceSum outside_;    // rows whose class was out of range, on a device (class_rows.h)
};

}  // namespace

KILN_REGISTER(metric_registry, "confusion_matrix", ConfusionMatrix, NoOptions,
              "Counts of (true class, predicted class) pairs, tagged confusion_matrix/true_T/"
              "pred_P.");

}  // namespace kiln::metrics
