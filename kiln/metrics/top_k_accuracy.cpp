// top_k_accuracy: the fraction of examples whose target class is among the k highest scores.
// Ties are ranked as scikit-learn's top_k_accuracy_score ranks them: of equal scores, the higher
// class index comes first. Tagged top_K_accuracy, so several k can be measured at once.

#include <fmt/format.h>

#include "kiln/metrics/device_sum.h"
#include "kiln/metrics/metric.h"

namespace kiln::metrics {
namespace {

struct TopKOptions {
  int64_t k = 5;
  void describe(Schema& s) {
    s.field("k", k, "How many of the highest-scoring classes may hold the target.").min(1);
  }
};

class TopKAccuracy : public Metric {
 public:
  explicit TopKAccuracy(const TopKOptions& o) : k_(o.k) {}
  void reset() override {
    correct_.reset();
    total_ = 0;
  }
  void update(const torch::Tensor& output, const torch::Tensor& target) override {
    KILN_CHECK(output.dim() == 2 && target.dim() == 1 && output.size(0) == target.size(0),
               "top_k_accuracy expects scores [batch, classes] and class indices [batch], got "
               "scores {} and targets {}",
               shape_of(output), shape_of(target));
    // Relative to the metric's own path: the objective names the config path.
    if (k_ >= output.size(1))
      throw ConfigError("k", "",
                        fmt::format("top_k_accuracy: k = {} is not below the number of classes "
                                    "({}), so every example would count as correct",
                                    k_, output.size(1)));
    torch::Tensor truth = target.to(torch::kInt64).unsqueeze(1);
    torch::Tensor target_score = output.gather(1, truth);
    // The target's rank: classes scoring higher, and tied classes of higher index.
    torch::Tensor index = torch::arange(output.size(1), truth.options()).unsqueeze(0);
    torch::Tensor ahead = output.gt(target_score) | (output.eq(target_score) & index.gt(truth));
    correct_.add(ahead.sum(1).lt(k_).sum());
    total_ += double(target.size(0));
  }
  std::vector<double> sums() const override { return {correct_.value(), total_}; }
  void set_sums(const std::vector<double>& sums) override {
    KILN_ASSERT(sums.size() == 2);
    correct_.set(sums[0]);
    total_ = sums[1];
  }
  double value() const override { return total_ > 0 ? correct_.value() / total_ : 0.0; }
  std::string tag_name(const std::string&) const override {
    return fmt::format("top_{}_accuracy", k_);
  }

 private:
  int64_t k_;
  DeviceSum correct_;
  double total_ = 0;
};

}  // namespace

KILN_REGISTER(metric_registry, "top_k_accuracy", TopKAccuracy, TopKOptions,
              "Fraction of examples whose target is among the k top-scoring classes; tagged "
              "top_K_accuracy.");

}  // namespace kiln::metrics
