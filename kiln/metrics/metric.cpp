#include "kiln/metrics/metric.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kiln/core/error.h"

namespace kiln::metrics {

MetricRegistry& metric_registry() {
  static MetricRegistry registry("metric", "Evaluation measures computed exactly over a split.");
  return registry;
}

std::string shape_of(const torch::Tensor& tensor) {
  return fmt::format("[{}]", fmt::join(tensor.sizes(), ", "));
}

void Metric::set_sums(const std::vector<double>&) {
  throw InternalError("this metric cannot restore its statistics, so it cannot be merged");
}

void Metric::merge(const Metric& other) {
  std::vector<double> mine = sums(), theirs = other.sums();
  if (theirs.empty()) return;
  if (mine.empty()) return set_sums(theirs);
  // Sizes differ when the two saw outputs of different widths (e.g. 3 and 5 classes).
  KILN_CHECK(mine.size() == theirs.size(),
             "cannot merge metric statistics of different sizes ({} and {}): the two measured "
             "outputs of different shapes",
             mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) mine[i] += theirs[i];
  set_sums(mine);
}

}  // namespace kiln::metrics
