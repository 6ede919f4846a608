// r2: the coefficient of determination 1 - SS_res / SS_tot per output, averaged uniformly over
// outputs (scikit-learn's r2_score). Exact whatever the batching: each batch's targets give their
// count, mean and sum of squared deviations (M2), and these combine by Chan et al.'s pairwise
// rule. Unlike SS_tot from the sums of y and y^2, that loses no digits to targets far from zero
// with a small spread (1e4 +- 0.005). A constant output scores 1 when predicted exactly and 0
// otherwise, as scikit-learn's force_finite does. Merging combines statistics rather than adding
// them, so summable() is false: ranks concatenate their sums() and set_sums() combines the parts.

#include <cfloat>
#include <cmath>

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/regression.h"

namespace kiln::metrics {
namespace {

// One output column's statistics over the examples seen.
struct Column {
  double mean = 0, deviations = 0, residual = 0;  // deviations: M2, residual: SS_res
};

class R2 : public Metric {
 public:
  explicit R2(const NoOptions&) {}
  void reset() override { count_ = 0, columns_.clear(), pending_.clear(), pending_counts_.clear(); }
  void update(const torch::Tensor& output, const torch::Tensor& target) override;
  /// {examples, outputs, then mean, M2 and SS_res of each output}; empty before any update.
  std::vector<double> sums() const override;
  /// Takes one or more sums() blocks one after another, as ranks concatenate them.
  void set_sums(const std::vector<double>& sums) override;
  bool summable() const override { return false; }
  void merge(const Metric& other) override { combine(other.sums()); }
  double value() const override;

 private:
  void combine(const std::vector<double>& sums);
  void add(double count, const std::vector<Column>& columns) const;
  /// Brings the batches kept on their device into the statistics, in their order.
  void fold() const;

  // The statistics are folded in lazily, when read: mutable so that reading may do it.
  mutable double count_ = 0;
  mutable std::vector<Column> columns_;
  mutable DeviceRows pending_;                  // each batch's [3, outputs] statistics
  mutable std::vector<double> pending_counts_;  // and its examples
};

void R2::update(const torch::Tensor& output, const torch::Tensor& target) {
  auto [predicted, truth] = as_outputs("r2", output, target);
  torch::Tensor mean = truth.mean(0);
  KILN_CHECK(columns_.empty() || int64_t(columns_.size()) == truth.size(1),
             "r2: outputs of {} values after {}", truth.size(1), columns_.size());
  // Kept on the device; read, and combined batch by batch, when the metric is.
  pending_.add(
      torch::stack({mean, (truth - mean).square().sum(0), (truth - predicted).square().sum(0)}));
  pending_counts_.push_back(double(truth.size(0)));
  if (columns_.empty()) columns_.resize(size_t(truth.size(1)));
}

void R2::fold() const {
  std::vector<torch::Tensor> batches = pending_.take();
  for (size_t b = 0; b < batches.size(); ++b) {
    const torch::Tensor& stats = batches[b];
    std::vector<Column> batch(size_t(stats.size(1)));
    const double* data = stats.data_ptr<double>();
    for (size_t j = 0; j < batch.size(); ++j)
      batch[j] = {data[j], data[batch.size() + j], data[2 * batch.size() + j]};
    add(pending_counts_[b], batch);
  }
  pending_counts_.clear();
}

void R2::add(double count, const std::vector<Column>& columns) const {
  if (count == 0) return;
  KILN_CHECK(columns_.empty() || columns_.size() == columns.size(),
             "r2: outputs of {} values after {}", columns.size(), columns_.size());
  if (columns_.empty()) columns_.resize(columns.size());
  double total = count_ + count;
  for (size_t j = 0; j < columns.size(); ++j) {
    Column& mine = columns_[j];
    double delta = columns[j].mean - mine.mean;
    mine.deviations += columns[j].deviations + delta * delta * count_ * count / total;
    mine.mean += delta * count / total;
    mine.residual += columns[j].residual;
  }
  count_ = total;
}

std::vector<double> R2::sums() const {
  fold();
  if (count_ == 0) return {};
  std::vector<double> out{count_, double(columns_.size())};
  for (const Column& c : columns_) out.insert(out.end(), {c.mean, c.deviations, c.residual});
  return out;
}

void R2::combine(const std::vector<double>& sums) {
  fold();  // this metric's own batches first, as they came
  for (size_t at = 0; at < sums.size();) {
    KILN_ASSERT(at + 2 <= sums.size());
    size_t outputs = size_t(sums[at + 1]);
    KILN_ASSERT(at + 2 + 3 * outputs <= sums.size());
    std::vector<Column> columns(outputs);
    for (size_t j = 0; j < outputs; ++j) {
      const double* c = &sums[at + 2 + 3 * j];
      columns[j] = {c[0], c[1], c[2]};
    }
    add(sums[at], columns);
    at += 2 + 3 * outputs;
  }
}

void R2::set_sums(const std::vector<double>& sums) {
  reset();
  combine(sums);
}

double R2::value() const {
  fold();
  if (count_ == 0) return 0.0;
  double total = 0;
  for (const Column& c : columns_) {
    // A constant column's deviations are rounding only (its mean is a few ulps off): below a
    // spread of 64 ulps of the mean, there is no variance to explain.
    double rounding = 64 * DBL_EPSILON * std::fabs(c.mean);
    bool constant = c.deviations <= count_ * rounding * rounding;
    total += constant ? (c.residual == 0 ? 1.0 : 0.0) : 1.0 - c.residual / c.deviations;
  }
  return total / double(columns_.size());
}

}  // namespace

KILN_REGISTER(metric_registry, "r2", R2, NoOptions,
              "Coefficient of determination 1 - SS_res / SS_tot, averaged over outputs.");

}  // namespace kiln::metrics
