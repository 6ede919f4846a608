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
  void reset() override {
    count_ = 0;
    squares_ = torch::Tensor();
  }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    auto [predicted, truth] = as_outputs("rmse", output, target);
    // Summed where the outputs are, read back only by sums().
    torch::Tensor per_output = (predicted - truth).detach().square().sum(0);
    KILN_CHECK(!squares_.defined() || squares_.numel() == per_output.numel(),
               "rmse: outputs of {} values after {}", per_output.numel(), squares_.numel());
    squares_ = squares_.defined() ? squares_.to(per_output.device()) + per_output : per_output;
    count_ += double(truth.size(0));
  }
  /// {examples, sum of squared errors per output...}; empty before any update.
  std::vector<double> sums() const override {
    if (!squares_.defined()) return {};
    torch::Tensor host = squares_.to(torch::kCPU).contiguous();
    std::vector<double> out{count_};
    out.insert(out.end(), host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
    return out;
  }
  void set_sums(const std::vector<double>& sums) override {
    reset();
    if (sums.empty()) return;
    count_ = sums[0];
    squares_ = torch::tensor(std::vector<double>(sums.begin() + 1, sums.end()), torch::kFloat64);
  }
  double value() const override {
    if (count_ == 0) return 0.0;
    std::vector<double> all = sums();
    double total = 0;
    for (size_t j = 1; j < all.size(); ++j) total += std::sqrt(all[j] / count_);
    return total / double(all.size() - 1);
  }

 private:
  double count_ = 0;
  torch::Tensor squares_;  // per output, double; undefined before any update
};

}  // namespace

KILN_REGISTER(metric_registry, "rmse", RootMeanSquaredError, NoOptions,
              "Root mean squared error of each output, averaged over outputs; in the targets' "
              "unit.");

}  // namespace kiln::metrics
