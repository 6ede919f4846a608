#include "kiln/optim/gradients.h"

#include <torch/version.h>

namespace kiln::optim {

std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> gradients;
  for (const auto& parameter : parameters)
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  return gradients;
}

torch::Tensor global_norm(const std::vector<torch::Tensor>& gradients) {
  if (gradients.empty()) return {};
  torch::NoGradGuard no_grad;
  // One launch for every tensor's norm, one to stack them, one for the norm of the norms.
  return torch::stack(at::_foreach_norm(gradients, 2)).norm(2);
}

namespace {

// Multiplies every gradient by `factor`, a 0-dim tensor on their device, without reading it.
void scale_all(const std::vector<torch::Tensor>& gradients, const torch::Tensor& factor) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  at::_foreach_mul_(gradients, factor);
#else
  // Before LibTorch 2.1 a list is multiplied by a tensor one tensor at a time.
  for (const auto& gradient : gradients) gradient.mul_(factor);
#endif
}

}  // namespace

torch::Tensor clip_gradients(const std::vector<torch::Tensor>& gradients, double max_norm,
                             double max_value) {
  if (gradients.empty()) return {};
  torch::NoGradGuard no_grad;
  torch::Tensor before = global_norm(gradients);
  if (max_value > 0)
    for (const auto& gradient : gradients) gradient.clamp_(-max_value, max_value);
  if (max_norm > 0) {
    // After value clipping the norm may have shrunk: scale by what is left, as clip_grad_norm_
    // applied after clip_grad_value_ would. The factor stays on the device, at most 1.
    torch::Tensor current = max_value > 0 ? global_norm(gradients) : before;
    scale_all(gradients, current.add(1e-6).reciprocal().mul_(max_norm).clamp_max_(1.0));
  }
  return before;
}

}  // namespace kiln::optim
