#pragma once
// The multi-tensor step of adam and adamw (multi_tensor.h), which differ only in where weight
// decay goes: into the gradient (Adam's L2 term) or onto the weights (AdamW's decoupled decay).
// Per parameter it is LibTorch's Adam/AdamW step: moments, bias corrections by the parameter's
// own step count, AMSGrad's maximum.

#include <cmath>

#include "kiln/optim/optimizers/multi_tensor.h"

namespace kiln::optim {

enum class WeightDecay { kL2, kDecoupled };

/// One update of `group`, whose options are `Options` (torch::optim::AdamOptions or
/// AdamWOptions), with state `ParamState` in `states`.
template <class ParamState, class Options, class StateMap>
void adam_group_step(torch::optim::OptimizerParamGroup& group, StateMap& states, WeightDecay decay,
                     const char* name) {
  namespace mt = multi_tensor;
  mt::Updated updated = mt::with_gradients(group, name);
  if (updated.empty()) return;
  const auto& options = static_cast<const Options&>(group.options());
  auto [beta1, beta2] = options.betas();
  std::vector<torch::Tensor> exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
  std::vector<double> step_sizes, bias_correction2_roots;
  for (const torch::Tensor& parameter : updated.params) {
    auto& state = mt::state_for<ParamState>(states, parameter, [&] {
      auto made = std::make_unique<ParamState>();
      made->step(0);
      made->exp_avg(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
      made->exp_avg_sq(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
      if (options.amsgrad())
        made->max_exp_avg_sq(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
      return made;
    });
    state.step(state.step() + 1);
    exp_avgs.push_back(state.exp_avg());
    exp_avg_sqs.push_back(state.exp_avg_sq());
    if (options.amsgrad()) max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
    double step = double(state.step());
    step_sizes.push_back(-options.lr() / (1 - std::pow(beta1, step)));
    bias_correction2_roots.push_back(std::sqrt(1 - std::pow(beta2, step)));
  }
  std::vector<torch::Tensor> grads = updated.grads;
  if (options.weight_decay() != 0) {
    if (decay == WeightDecay::kDecoupled)
      at::_foreach_mul_(updated.params, 1 - options.lr() * options.weight_decay());
    else
      grads = at::_foreach_add(grads, updated.params, options.weight_decay());
  }
  at::_foreach_mul_(exp_avgs, beta1);
  at::_foreach_add_(exp_avgs, grads, 1 - beta1);
  at::_foreach_mul_(exp_avg_sqs, beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
  if (options.amsgrad()) at::_foreach_maximum_(max_exp_avg_sqs, exp_avg_sqs);
  std::vector<torch::Tensor> denominators =
      at::_foreach_sqrt(options.amsgrad() ? max_exp_avg_sqs : exp_avg_sqs);
  at::_foreach_div_(denominators, multi_tensor::scalars(bias_correction2_roots));
  at::_foreach_add_(denominators, options.eps());
  at::_foreach_addcdiv_(updated.params, exp_avgs, denominators, multi_tensor::scalars(step_sizes));
}

}  // namespace kiln::optim
