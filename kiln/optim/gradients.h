#pragma once
// Gradient clipping and the global gradient norm the trainer logs as train/grad_norm, computed on
// the gradients' device with multi-tensor operators: nothing here reads a value back, so a step
// that clips need not wait for the GPU.
// Thread-safety: functions of their arguments.

#include <torch/torch.h>

#include <vector>

namespace kiln::optim {

/// The gradients of `parameters` that exist (frozen and unused parameters have none).
std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters);

/// The L2 norm of all `gradients` together, a 0-dim tensor on their device (undefined when there
/// are none).
torch::Tensor global_norm(const std::vector<torch::Tensor>& gradients);

/// Clips each gradient element to [-max_value, max_value] when max_value > 0, then scales all
/// gradients so their global norm is at most max_norm when max_norm > 0 (as
/// torch.nn.utils.clip_grad_value_ and clip_grad_norm_ do). Returns the global norm before any
/// clipping (undefined without gradients), which the trainer logs and checks for NaN/Inf: a
/// gradient that is not finite leaves the gradients not finite, and the trainer does not apply
/// them.
torch::Tensor clip_gradients(const std::vector<torch::Tensor>& gradients, double max_norm,
                             double max_value);

}  // namespace kiln::optim
