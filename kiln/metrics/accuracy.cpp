// accuracy: the fraction of examples whose highest logit is the target class.

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

class Accuracy : public Metric {
 public:
  explicit Accuracy(const NoOptions&) {}
  void reset() override {
    correct_.reset();
    total_ = 0;
  }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1,
               "accuracy expects scores [batch, classes] and class indices [batch]");
    correct_.add(output.argmax(1).eq(target).sum());
    total_ += static_cast<double>(target.size(0));
  }
  std::vector<double> sums() const override { return {correct_.value(), total_}; }
  void set_sums(const std::vector<double>& sums) override {
    KILN_ASSERT(sums.size() == 2);
    correct_.set(sums[0]);
    total_ = sums[1];
  }
  double value() const override { return total_ > 0 ? correct_.value() / total_ : 0.0; }

 private:
  DeviceSum correct_;
  double total_ = 0;
};

}  // namespace

KILN_REGISTER(metric_registry, "accuracy", Accuracy, NoOptions,
              "Fraction of examples whose top-scoring class is the target.");

}  // namespace kiln::metrics
