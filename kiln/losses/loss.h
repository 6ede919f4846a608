#pragma once
// Losses: a scalar to minimise from a batch of model outputs and targets.
// Thread-safety: forward() is const.

#include <torch/torch.h>

#include "kiln/core/registry.h"

namespace kiln::losses {

class Loss {
 public:
  virtual ~Loss() = default;
  /// The mean loss over the batch. An option that does not fit the outputs is a ConfigError
  /// whose path is the option's, relative to the loss (`class_weights`); any other kiln::Error
  /// (shapes) is reported as a config error at the loss.
  virtual torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const = 0;
  /// What forward()'s mean divides the batch's sum by, so that means of batches of any size
  /// combine into the mean over all their examples: the number of examples, unless the loss
  /// weighs them (cross_entropy's class_weights: the sum of the targets' weights).
  virtual double mean_weight(const torch::Tensor& output, const torch::Tensor& target) const {
    return output.dim() > 0 ? double(output.size(0)) : 1.0;
  }
};

using LossRegistry = Registry<Loss>;
LossRegistry& loss_registry();

}  // namespace kiln::losses
