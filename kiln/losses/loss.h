#pragma once
// Losses: a scalar to minimise from a batch of model outputs and targets.
// Thread-safety: forward() is const.

#include <torch/torch.h>

#include "kiln/core/registry.h"

namespace kiln::losses {

class Loss {
 public:
  virtual ~Loss() = default;
  /// The mean loss over the batch.
  virtual torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const = 0;
};

using LossRegistry = Registry<Loss>;
LossRegistry& loss_registry();

}  // namespace kiln::losses
