#pragma once
// Losses: a scalar to minimise from a batch of model outputs and targets.
// Thread-safety: forward() is const.

#include <torch/torch.h>

#include <optional>
#include <string>

#include "kiln/core/registry.h"

namespace kiln::losses {

/// A target the loss cannot take: its row in the batch and what is wrong with it.
struct BadTarget {
  int64_t row = 0;
  std::string problem;
};

class Loss {
 public:
  virtual ~Loss() = default;
  /// The first target these outputs cannot be compared with (a class index outside the logits'
  /// classes), checked before forward() so that bad data is reported as data, with where it came
  /// from, rather than as LibTorch's internal assertion. The objective passes the target in host
  /// memory where the batch has a copy there (data::Batch::host_target), so that a check need not
  /// wait for the device; mean_weight() gets the same.
  virtual std::optional<BadTarget> check_targets(const torch::Tensor& output,
                                                 const torch::Tensor& target) const {
    return std::nullopt;
  }
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

  /// How the outputs this loss trains become probabilities, for curves over thresholds
  /// (TensorBoard's PR curves): a softmax over the classes of each row (cross_entropy), a
  /// sigmoid of each output (binary_cross_entropy), or none (a regression).
  enum class Scores { kNone, kSoftmax, kSigmoid };
  virtual Scores scores() const { return Scores::kNone; }
};

using LossRegistry = Registry<Loss>;
LossRegistry& loss_registry();

}  // namespace kiln::losses
