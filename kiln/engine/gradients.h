#pragma once
// Gradient clipping and the global gradient norm the trainer logs as train/grad_norm.
// Thread-safety: functions of their arguments.

#include <torch/torch.h>

#include <vector>

namespace kiln::engine {

/// The gradients of `parameters` that exist (frozen and unused parameters have none).
std::vector<torch::Tensor> gradients_of(const std::vector<torch::Tensor>& parameters);

/// The L2 norm of all `gradients` together, as one number (a single device sync).
double global_norm(const std::vector<torch::Tensor>& gradients);

/// Clips each gradient element to [-max_value, max_value] when max_value > 0, then scales all
/// gradients so their global norm is at most max_norm when max_norm > 0 (as
/// torch.nn.utils.clip_grad_value_ and clip_grad_norm_ do). Returns the global norm before any
/// clipping, which is what the trainer logs and checks for NaN/Inf.
double clip_gradients(const std::vector<torch::Tensor>& gradients, double max_norm,
                      double max_value);

}  // namespace kiln::engine
