#pragma once
// Optimizers are LibTorch's (their options, state and checkpoints), built by name from the config
// over the model's parameters; sgd, adam, adamw and rmsprop step with multi-tensor operators
// (optimizers/multi_tensor.h).

#include <torch/torch.h>

#include <vector>

#include "kiln/core/registry.h"

namespace kiln::optim {

using OptimizerRegistry = Registry<torch::optim::Optimizer, std::vector<torch::Tensor>>;
OptimizerRegistry& optimizer_registry();

/// The learning rate of the first parameter group.
double current_lr(const torch::optim::Optimizer& optimizer);

}  // namespace kiln::optim
