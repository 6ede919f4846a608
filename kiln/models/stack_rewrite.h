#pragma once
// The walk the inference-only rewrites share (fold_batch_norms.h, onednn_convolutions.h): every
// stack of layers of a model, the model itself included when it is one.
// Thread-safety: call before the model is used from other threads.

#include <torch/torch.h>

namespace kiln::models {

/// Calls `rewrite(torch::nn::SequentialImpl&)` on each stack of `model`; returns the sum of what
/// the calls returned (how many layers they rewrote).
template <class Rewrite>
int rewrite_stacks(torch::nn::Module& model, Rewrite rewrite) {
  int rewritten = 0;
  if (auto* stack = dynamic_cast<torch::nn::SequentialImpl*>(&model)) rewritten += rewrite(*stack);
  for (const auto& module : model.modules(/*include_self=*/false))
    if (auto stack = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(module))
      rewritten += rewrite(*stack);
  return rewritten;
}

}  // namespace kiln::models
