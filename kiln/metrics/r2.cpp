// r2: the coefficient of determination 1 - SS_res / SS_tot per output, averaged uniformly over
// outputs (scikit-learn's r2_score). Exact whatever the batching: SS_tot follows from the sums of
// y and y^2, kept in double precision. A constant output scores 1 when predicted exactly and 0
// otherwise, as scikit-learn's force_finite does.

#include "kiln/metrics/regression.h"

namespace kiln::metrics {
namespace {

class R2 : public Metric {
 public:
  explicit R2(const NoOptions&) {}
  void reset() override { count_ = 0, sum_.clear(), sum_squares_.clear(), residual_.clear(); }
  void update(const torch::Tensor& output, const torch::Tensor& target) override;
  /// {examples, sum of y per output..., sum of y^2 per output..., SS_res per output...}.
  std::vector<double> sums() const override;
  void set_sums(const std::vector<double>& sums) override;
  double value() const override;

 private:
  double count_ = 0;
  std::vector<double> sum_, sum_squares_, residual_;
};

void R2::update(const torch::Tensor& output, const torch::Tensor& target) {
  auto [predicted, truth] = as_outputs("r2", output, target);
  torch::Tensor columns =
      torch::stack({truth.sum(0), truth.square().sum(0), (truth - predicted).square().sum(0)})
          .to(torch::kCPU)
          .contiguous();
  size_t outputs = size_t(columns.size(1));
  KILN_CHECK(sum_.empty() || sum_.size() == outputs, "r2: outputs of {} values after {}", outputs,
             sum_.size());
  sum_.resize(outputs, 0.0), sum_squares_.resize(outputs, 0.0), residual_.resize(outputs, 0.0);
  const double* data = columns.data_ptr<double>();
  for (size_t j = 0; j < outputs; ++j) {
    sum_[j] += data[j];
    sum_squares_[j] += data[outputs + j];
    residual_[j] += data[2 * outputs + j];
  }
  count_ += double(truth.size(0));
}

std::vector<double> R2::sums() const {
  if (sum_.empty()) return {};
  std::vector<double> out{count_};
  for (const auto* part : {&sum_, &sum_squares_, &residual_})
    out.insert(out.end(), part->begin(), part->end());
  return out;
}

void R2::set_sums(const std::vector<double>& sums) {
  reset();
  if (sums.empty()) return;
  KILN_ASSERT(sums.size() % 3 == 1);
  size_t outputs = sums.size() / 3;
  count_ = sums[0];
  sum_.assign(sums.begin() + 1, sums.begin() + 1 + outputs);
  sum_squares_.assign(sums.begin() + 1 + outputs, sums.begin() + 1 + 2 * outputs);
  residual_.assign(sums.begin() + 1 + 2 * outputs, sums.end());
}

double R2::value() const {
  if (count_ == 0) return 0.0;
  double total = 0;
  for (size_t j = 0; j < sum_.size(); ++j) {
    double total_squares = sum_squares_[j] - sum_[j] * sum_[j] / count_;
    // Rounding leaves a constant column's SS_tot a hair from 0, which must not pass for variance.
    bool constant = total_squares <= 1e-12 * sum_squares_[j];
    total += constant ? (residual_[j] == 0 ? 1.0 : 0.0) : 1.0 - residual_[j] / total_squares;
  }
  return total / double(sum_.size());
}

}  // namespace

KILN_REGISTER(metric_registry, "r2", R2, NoOptions,
              "Coefficient of determination 1 - SS_res / SS_tot, averaged over outputs.");

}  // namespace kiln::metrics
