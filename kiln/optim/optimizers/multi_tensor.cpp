#include "kiln/optim/optimizers/multi_tensor.h"

#include "kiln/core/error.h"

namespace kiln::optim::multi_tensor {

Updated with_gradients(const torch::optim::OptimizerParamGroup& group, const char* optimizer) {
  Updated updated;
  for (const torch::Tensor& parameter : group.params()) {
    const torch::Tensor& grad = parameter.grad();
    if (!grad.defined()) continue;
    if (grad.is_sparse())
      throw Error(std::string(optimizer) + " does not support sparse gradients");
    updated.params.push_back(parameter);
    updated.grads.push_back(grad);
  }
  return updated;
}

std::vector<at::Scalar> scalars(const std::vector<double>& values) {
  return std::vector<at::Scalar>(values.begin(), values.end());
}

}  // namespace kiln::optim::multi_tensor
