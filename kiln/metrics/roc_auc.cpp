// roc_auc: the area under the ROC curve of a binary task: the probability that a random positive
// example scores above a random negative one, ties counting half (the Mann-Whitney statistic,
// which is scikit-learn's roc_auc_score with tied scores). Exact, so it keeps every example's
// score: ranks concatenate their examples rather than add sums (summable() is false).
// Undefined (NaN) until both classes have been seen, and once any score is NaN.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

class RocAuc : public Metric {
 public:
  explicit RocAuc(const NoOptions&) {}
  void reset() override { scores_.clear(), labels_.clear(), pending_.clear(); }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    torch::Tensor score = positive_score(output);
    torch::Tensor truth = target.dim() == 2 && target.size(1) == 1 ? target.squeeze(1) : target;
    KILN_CHECK(truth.dim() == 1 && truth.size(0) == score.size(0),
               "roc_auc expects 0/1 targets [batch] for outputs {}, got targets {}",
               shape_of(output), shape_of(target));
    // Kept where the batch is and read when the metric is; in host memory, at once (a bad
    // label is then refused at its batch).
    pending_.add(torch::stack({score, truth.to(score.scalar_type())}, 1));
    if (score.is_cpu()) fold();
  }
  /// {score, label} of every example, in order.
  std::vector<double> sums() const override {
    fold();
    std::vector<double> out;
    for (size_t i = 0; i < scores_.size(); ++i) out.insert(out.end(), {scores_[i], labels_[i]});
    return out;
  }
  void set_sums(const std::vector<double>& sums) override {
    KILN_ASSERT(sums.size() % 2 == 0);
    reset();
    for (size_t i = 0; i < sums.size(); i += 2) {
      scores_.push_back(sums[i]);
      labels_.push_back(sums[i + 1]);
    }
  }
  bool summable() const override { return false; }
  void merge(const Metric& other) override {
    std::vector<double> both = sums(), theirs = other.sums();
    both.insert(both.end(), theirs.begin(), theirs.end());
    set_sums(both);
  }
  double value() const override;

 private:
  // One score per example that orders them as the positive class's probability does: the logit
  // of one column, or the difference of two classes' logits (softmax's p1 grows with it).
  static torch::Tensor positive_score(const torch::Tensor& output) {
    if (output.dim() == 1) return output;
    KILN_CHECK(output.dim() == 2 && (output.size(1) == 1 || output.size(1) == 2),
               "roc_auc is for binary tasks: outputs [batch], [batch, 1] (a logit) or [batch, 2] "
               "(two classes' scores), got {}",
               shape_of(output));
    if (output.size(1) == 1) return output.squeeze(1);
    return output.select(1, 1) - output.select(1, 0);
  }

  // Brings the pairs kept on the device into scores_ and labels_, in order.
  void fold() const {
    for (const torch::Tensor& pairs : pending_.take()) {
      const double* data = pairs.data_ptr<double>();
      for (int64_t i = 0; i < pairs.size(0); ++i) {
        double label = data[2 * i + 1];
        KILN_CHECK(label == 0 || label == 1, "roc_auc: targets must be 0 or 1, got {}", label);
        scores_.push_back(data[2 * i]);
        labels_.push_back(label);
      }
    }
  }

  // Folded in lazily, when read: mutable so that reading may do it.
  mutable std::vector<double> scores_, labels_;
  mutable DeviceRows pending_;  // [batch, 2] (score, label) pairs not read yet
};

double RocAuc::value() const {
  fold();
  // A NaN score (a diverged model) has no rank; it would also break the sort's ordering.
  if (std::any_of(scores_.begin(), scores_.end(), [](double s) { return std::isnan(s); }))
    return std::numeric_limits<double>::quiet_NaN();
  std::vector<size_t> order(scores_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return scores_[a] < scores_[b]; });
  // The sum of the positives' ranks, tied scores sharing the mean of their ranks.
  double positive_ranks = 0, positives = 0;
  for (size_t start = 0; start < order.size();) {
    size_t end = start;
    while (end < order.size() && scores_[order[end]] == scores_[order[start]]) ++end;
    double mean_rank = 0.5 * double(start + 1 + end);
    for (size_t i = start; i < end; ++i)
      if (labels_[order[i]] == 1) positive_ranks += mean_rank, positives += 1;
    start = end;
  }
  double negatives = double(scores_.size()) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  return (positive_ranks - positives * (positives + 1) / 2) / (positives * negatives);
}

}  // namespace

KILN_REGISTER(metric_registry, "roc_auc", RocAuc, NoOptions,
              "Area under the ROC curve of a binary task, exact with ties; outputs one logit or "
              "two classes' scores.");

}  // namespace kiln::metrics
