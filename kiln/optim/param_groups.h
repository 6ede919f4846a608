#pragma once
// Optimizers over parameter groups: each trainable parameter learns at the configured rate times
// the scale of the longest `train.lr_scales` pattern its name matches (1 when none does), as in
// fine-tuning a pretrained backbone slower than a new head, and decays its weights at the
// configured weight_decay times its `train.weight_decay_scales` scale (no decay on biases and
// norms: {"*.bias": 0, ...}). Frozen parameters (requires_grad false) are left out.

#include <torch/torch.h>

#include <map>
#include <memory>
#include <string>

#include "kiln/core/registry.h"

namespace kiln::optim {

/// Whether `name` matches `pattern`, where `*` stands for any run of characters
/// (`layer4.*`, `*.bias`, `fc.weight`).
bool matches_pattern(const std::string& pattern, const std::string& name);

/// The optimizer `spec` names over the trainable `parameters`, grouped by learning-rate scale and
/// weight-decay scale (`train.weight_decay_scales`, patterns as lr_scales): the group of both 1
/// first when there is one. A pattern matching no trainable parameter is a ConfigError at
/// `scales_path` (or train.weight_decay_scales), and so are no trainable parameter at all and
/// decay scales for an optimizer without weight_decay.
std::unique_ptr<torch::optim::Optimizer> build_grouped_optimizer(
    const ComponentSpec& spec, const torch::OrderedDict<std::string, torch::Tensor>& parameters,
    const std::map<std::string, double>& lr_scales, const std::string& scales_path,
    const std::map<std::string, double>& weight_decay_scales = {});

}  // namespace kiln::optim
