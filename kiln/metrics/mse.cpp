// mse: the mean squared error over every element of outputs and targets of the same shape
// (scikit-learn's uniform average over outputs).

#include "kiln/metrics/regression.h"

namespace kiln::metrics {
namespace {

class MeanSquaredError : public MeanErrorMetric {
 public:
  explicit MeanSquaredError(const NoOptions&) : MeanErrorMetric("mse") {}

 protected:
  torch::Tensor per_element(const torch::Tensor& error) const override { return error.square(); }
};

}  // namespace

KILN_REGISTER(metric_registry, "mse", MeanSquaredError, NoOptions,
              "Mean squared error over every output element (regression, reconstruction).");

}  // namespace kiln::metrics
