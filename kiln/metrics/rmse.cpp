// rmse: the root mean squared error of each output, averaged uniformly over outputs (every
// non-batch element an output), as scikit-learn's mean_squared_error(squared=False). The root of
// the whole set's mean per output, not a mean of per-batch roots: exact whatever the batching.

#include <cmath>

#include "kiln/metrics/regression.h"

namespace kiln::metrics {
namespace {

class RootMeanSquaredError : public Metric {
 public:
  explicit RootMeanSquaredError(const NoOptions&) {}
  void reset() override { count_ = 0, squares_.clear(); }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    auto [predicted, truth] = as_outputs("rmse", output, target);
    torch::Tensor per_output = (predicted - truth).square().sum(0).to(torch::kCPU).contiguous();
    size_t outputs = size_t(per_output.numel());
    KILN_CHECK(squares_.empty() || squares_.size() == outputs,
               "rmse: outputs of {} values after {}", outputs, squares_.size());
    squares_.resize(outputs, 0.0);
    for (size_t j = 0; j < outputs; ++j) squares_[j] += per_output.data_ptr<double>()[j];
    count_ += double(truth.size(0));
  }
  /// {examples, sum of squared errors per output...}; empty before any update.
  std::vector<double> sums() const override {
    if (squares_.empty()) return {};
    std::vector<double> out{count_};
    out.insert(out.end(), squares_.begin(), squares_.end());
    return out;
  }
  void set_sums(const std::vector<double>& sums) override {
    reset();
    if (sums.empty()) return;
    count_ = sums[0];
    squares_.assign(sums.begin() + 1, sums.end());
  }
  double value() const override {
    if (count_ == 0) return 0.0;
    double total = 0;
    for (double squares : squares_) total += std::sqrt(squares / count_);
    return total / double(squares_.size());
  }

 private:
  double count_ = 0;
  std::vector<double> squares_;
};

}  // namespace

KILN_REGISTER(metric_registry, "rmse", RootMeanSquaredError, NoOptions,
              "Root mean squared error of each output, averaged over outputs; in the targets' "
              "unit.");

}  // namespace kiln::metrics
