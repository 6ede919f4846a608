// accuracy: the fraction of examples whose highest logit is the target class.

#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

class Accuracy : public Metric {
 public:
  explicit Accuracy(const NoOptions&) {}
  void reset() override { correct_ = total_ = 0; }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1,
               "accuracy expects scores [batch, classes] and class indices [batch]");
    correct_ += output.argmax(1).eq(target).sum().item<double>();
    total_ += static_cast<double>(target.size(0));
  }
  std::vector<double> sums() const override { return {correct_, total_}; }
  void set_sums(const std::vector<double>& sums) override {
    KILN_ASSERT(sums.size() == 2);
    correct_ = sums[0];
    total_ = sums[1];
  }
  double value() const override { return total_ > 0 ? correct_ / total_ : 0.0; }

 private:
  double correct_ = 0, total_ = 0;
};

}  // namespace

KILN_REGISTER(metric_registry, "accuracy", Accuracy, NoOptions,
              "Fraction of examples whose top-scoring class is the target.");

}  // namespace kiln::metrics
