#pragma once
// The target check that element-wise losses (mse, mae, huber, binary_cross_entropy) share. torch
// would broadcast a [batch] target against a [batch, 2] output and only warn: a silent wrong
// loss, so shapes must agree exactly, except that a [batch] target fits a one-column output (the
// shape a regression dataset gives).

#include <torch/torch.h>

namespace kiln::losses {

/// `target` in `output`'s shape and dtype; a kiln::Error naming `loss` and both shapes when the
/// shapes differ.
torch::Tensor same_shape_target(const char* loss, const torch::Tensor& output,
                                const torch::Tensor& target);

}  // namespace kiln::losses
