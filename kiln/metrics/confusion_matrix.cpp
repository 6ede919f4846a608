// confusion_matrix: how many examples of each true class were predicted as each class (argmax),
// reported cell by cell as confusion_matrix/true_T/pred_P counts (scikit-learn's
// confusion_matrix with labels 0..classes-1: rows true, columns predicted).

#include <fmt/format.h>

#include <cmath>

#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

class ConfusionMatrix : public Metric {
 public:
  explicit ConfusionMatrix(const NoOptions&) {}
  void reset() override { counts_.clear(); }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1 && output.size(0) == target.size(0),
               "confusion_matrix expects scores [batch, classes] and class indices [batch], got "
               "scores {} and targets {}",
               shape_of(output), shape_of(target));
    int64_t classes = output.size(1);
    KILN_CHECK(counts_.empty() || int64_t(counts_.size()) == classes * classes,
               "confusion_matrix: outputs of {} classes after outputs of {}", classes,
               std::lround(std::sqrt(double(counts_.size()))));
    torch::Tensor truth = target.to(torch::kInt64);
    if (truth.numel() > 0) {
      int64_t low = truth.min().item<int64_t>(), high = truth.max().item<int64_t>();
      KILN_CHECK(low >= 0 && high < classes,
                 "confusion_matrix: target class {} is out of range for {} classes",
                 low < 0 ? low : high, classes);
    }
    torch::Tensor cells = torch::bincount(truth * classes + output.argmax(1), {}, classes * classes)
                              .to(torch::kCPU, torch::kDouble)
                              .contiguous();
    counts_.resize(size_t(classes * classes), 0.0);
    for (int64_t i = 0; i < classes * classes; ++i) counts_[i] += cells.data_ptr<double>()[i];
  }
  /// The counts row by row (true class), classes x classes; empty before any update.
  std::vector<double> sums() const override { return counts_; }
  void set_sums(const std::vector<double>& sums) override { counts_ = sums; }
  /// The fraction on the diagonal (accuracy), for callers that want one number.
  double value() const override {
    double diagonal = 0, total = 0;
    int64_t n = classes();
    for (int64_t i = 0; i < n * n; ++i) (i / n == i % n ? diagonal : total) += counts_[i];
    total += diagonal;
    return total > 0 ? diagonal / total : 0.0;
  }
  std::map<std::string, double> values() const override {
    std::map<std::string, double> out;
    int64_t n = classes();
    for (int64_t i = 0; i < n * n; ++i) out[cell_key(i / n, i % n)] = counts_[i];
    return out;
  }
  std::vector<std::string> value_keys() const override {
    std::vector<std::string> keys;
    for (const auto& item : values()) keys.push_back(item.first);
    return keys;  // none before the first batch tells the number of classes
  }

 private:
  int64_t classes() const { return std::lround(std::sqrt(double(counts_.size()))); }
  static std::string cell_key(int64_t truth, int64_t predicted) {
    return fmt::format("true_{}/pred_{}", truth, predicted);
  }

  std::vector<double> counts_;
};

}  // namespace

KILN_REGISTER(metric_registry, "confusion_matrix", ConfusionMatrix, NoOptions,
              "Counts of (true class, predicted class) pairs, tagged confusion_matrix/true_T/"
              "pred_P.");

}  // namespace kiln::metrics
