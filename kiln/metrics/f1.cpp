// f1: the harmonic mean of precision and recall, 2tp / (2tp + fp + fn); the macro average is the
// mean of the per-class F1 scores (not the F1 of the mean precision and recall), as
// scikit-learn's. See class_counts.h for tasks and ties.

#include "kiln/metrics/class_counts.h"

namespace kiln::metrics {
namespace {

class F1 : public ClassCountMetric {
 public:
  explicit F1(const ClassScoreOptions& o) : ClassCountMetric(o, "f1") {}

 protected:
  double score(double tp, double fp, double fn) const override {
    return ratio_or_zero(2 * tp, 2 * tp + fp + fn);
  }
};

}  // namespace

KILN_REGISTER(metric_registry, "f1", F1, ClassScoreOptions,
              "F1 score 2tp / (2tp + fp + fn), macro or micro averaged; multiclass or "
              "multi-label.");

}  // namespace kiln::metrics
