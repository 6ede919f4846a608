// mae: the mean absolute error over every element of outputs and targets of the same shape
// (scikit-learn's uniform average over outputs).

#include "kiln/metrics/regression.h"

namespace kiln::metrics {
namespace {

class MeanAbsoluteError : public MeanErrorMetric {
 public:
  explicit MeanAbsoluteError(const NoOptions&) : MeanErrorMetric("mae") {}

 protected:
  torch::Tensor per_element(const torch::Tensor& error) const override { return error.abs(); }
};

}  // namespace

KILN_REGISTER(metric_registry, "mae", MeanAbsoluteError, NoOptions,
              "Mean absolute error over every output element.");

}  // namespace kiln::metrics
