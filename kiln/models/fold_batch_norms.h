#pragma once
// Inference-only rewriting of a trained model: each batch norm that directly follows a 2-D
// convolution in a stack of layers (anywhere in the model) is folded into the convolution's
// weights and bias, and its place in the stack taken by an identity, so that evaluation runs one
// op where it ran two. The model then computes what it computed in eval mode (to float
// rounding), but must not be trained or saved: its batch norms are gone from the computation,
// though not from its parameters. Batch norms inside blocks with a forward of their own (a
// residual's) are left as they are.
// Thread-safety: call before the model is used from other threads.

#include <torch/torch.h>

namespace kiln::models {

/// Folds every convolution-then-batch-norm pair of `model`; returns how many it folded.
int fold_batch_norms(torch::nn::Module& model);

}  // namespace kiln::models
