#include "kiln/metrics/metric.h"

namespace kiln::metrics {

MetricRegistry& metric_registry() {
  static MetricRegistry registry("metric", "Evaluation measures computed exactly over a split.");
  return registry;
}

}  // namespace kiln::metrics
