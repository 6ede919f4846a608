#include "kiln/engine/gradients.h"

#include <cmath>

namespace kiln::engine {

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients;
  for (const auto& parameter : parameters)
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  return gradients;
}

namespace {

torch::Tensor norm_tensor(const std::vector<torch::Tensor>& gradients) {
  std::vector<torch::Tensor> norms;
  norms.reserve(gradients.size());
  for (const auto& gradient : gradients)
    norms.push_back(gradient.detach().norm(2).to(torch::kFloat64));
  return torch::stack(norms).norm(2);
}

}  // namespace

double global_norm(const std::vector<torch::Tensor>& gradients) {
  if (gradients.empty()) return 0;
  return norm_tensor(gradients).item<double>();
}

double clip_gradients(const std::vector<torch::Tensor>& gradients, double max_norm,
                      double max_value) {
  if (gradients.empty()) return 0;
  torch::NoGradGuard no_grad;
  torch::Tensor norm = norm_tensor(gradients);
  double before = norm.item<double>();
  if (max_value > 0)
    for (const auto& gradient : gradients) gradient.clamp_(-max_value, max_value);
  if (max_norm > 0 && std::isfinite(before)) {
    // After value clipping the norm may have shrunk: scale by what is left, as clip_grad_norm_
    // applied after clip_grad_value_ would.
    double current = max_value > 0 ? norm_tensor(gradients).item<double>() : before;
    double factor = max_norm / (current + 1e-6);
    if (factor < 1)
      for (const auto& gradient : gradients) gradient.mul_(factor);
  }
  return before;
}

}  // namespace kiln::engine
