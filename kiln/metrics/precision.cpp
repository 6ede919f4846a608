// precision: of the examples predicted as a class, the fraction that are of it; averaged over
// classes (macro) or from the summed counts (micro). See class_counts.h for tasks and ties.

#include "kiln/metrics/class_counts.h"

namespace kiln::metrics {
namespace {

class Precision : public ClassCountMetric {
 public:
  explicit Precision(const ClassScoreOptions& o) : ClassCountMetric(o, "precision") {}

 protected:
  double score(double tp, double fp, double) const override { return ratio_or_zero(tp, tp + fp); }
};

}  // namespace

KILN_REGISTER(metric_registry, "precision", Precision, ClassScoreOptions,
              "Precision tp / (tp + fp), macro or micro averaged; multiclass or multi-label.");

}  // namespace kiln::metrics
