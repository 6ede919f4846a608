#pragma once
// Inference-only rewriting of a trained model for the CPU: the 2-D convolutions of each stack of
// layers run on oneDNN (the library LibTorch's CPU convolutions call) with their weights
// reordered into its blocked layout once, instead of at every call, and the activations stay in
// that layout through the ReLUs and max pools that follow, until the first other layer, before
// which they become ordinary tensors again. This is what TorchScript's optimize_for_inference
// does to a scripted model, for kiln's own; fold the batch norms first (fold_batch_norms.h), so
// that the convolutions' runs are not broken by them. Results equal the model's to float
// rounding; the model must not be trained or saved afterwards.
// Thread-safety: call before the model is used from other threads.

#include <torch/torch.h>

namespace kiln::models {

/// Rewrites the float32 zero-padded 2-D convolutions of `model`'s stacks (on the CPU, where this
/// LibTorch has oneDNN); returns how many. Models on another device are left alone (0).
int run_convolutions_on_onednn(torch::nn::Module& model);

}  // namespace kiln::models
