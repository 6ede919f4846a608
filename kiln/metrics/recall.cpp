// recall: of the examples of a class, the fraction predicted as it; averaged over classes
// (macro) or from the summed counts (micro). See class_counts.h for tasks and ties.

#include "kiln/metrics/class_counts.h"

namespace kiln::metrics {
namespace {

class Recall : public ClassCountMetric {
 public:
  explicit Recall(const ClassScoreOptions& o) : ClassCountMetric(o, "recall") {}

 protected:
  double score(double tp, double, double fn) const override { return ratio_or_zero(tp, tp + fn); }
};

}  // namespace

KILN_REGISTER(metric_registry, "recall", Recall, ClassScoreOptions,
              "Recall tp / (tp + fn), macro or micro averaged; multiclass or multi-label.");

}  // namespace kiln::metrics
