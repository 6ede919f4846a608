#pragma once
// What the optimizers' multi-tensor steps share. LibTorch's own step() launches several kernels
// per parameter; on a GPU a step is then bound by launches. kiln's optimizers keep LibTorch's
// options, state and checkpoint format and update each parameter group with _foreach_
// operators instead: one launch per operation for every tensor of the group, the arithmetic of
// LibTorch's step (and of PyTorch's foreach=True) unchanged.
// Thread-safety: functions of their arguments.

#include <torch/torch.h>

#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln::optim::multi_tensor {

/// The parameters of a group that have a gradient, and those gradients.
struct Updated {
  std::vector<torch::Tensor> params, grads;
  bool empty() const { return params.empty(); }
};
/// Refuses a sparse gradient, as LibTorch's optimizers do, naming `optimizer`.
Updated with_gradients(const torch::optim::OptimizerParamGroup& group, const char* optimizer);

/// LibTorch's step() around a multi-tensor update: evaluates `closure` (if any) with gradients
/// on, then `update(group)` for each of `groups` without; returns the closure's loss.
template <class Update>
torch::Tensor step_groups(const torch::optim::Optimizer::LossClosure& closure,
                          std::vector<torch::optim::OptimizerParamGroup>& groups, Update update) {
  torch::Tensor loss;
  if (closure) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  torch::NoGradGuard no_grad;
  for (auto& group : groups) update(group);
  return loss;
}

/// One scalar per tensor, for the _foreach_ operators that take a list of them.
std::vector<at::Scalar> scalars(const std::vector<double>& values);

/// The key LibTorch files a parameter's state under: the text of its implementation's address
/// in LibTorch 1.x (so that checkpoints of either step read the same), the address in later ones.
template <class StateMap>
typename StateMap::key_type state_key(const StateMap&, const torch::Tensor& parameter) {
  if constexpr (std::is_same_v<typename StateMap::key_type, std::string>) {
    std::ostringstream text;
    text << static_cast<const void*>(parameter.unsafeGetTensorImpl());
    return text.str();
  } else {
    return parameter.unsafeGetTensorImpl();
  }
}

/// The state of `parameter` in `states`, made by `make` (a std::unique_ptr<State>) the first
/// time, as LibTorch's step makes it.
template <class State, class StateMap, class Make>
State& state_for(StateMap& states, const torch::Tensor& parameter, Make make) {
  auto key = state_key(states, parameter);
  auto found = states.find(key);
  if (found == states.end()) found = states.emplace(key, make()).first;
  return static_cast<State&>(*found->second);
}

}  // namespace kiln::optim::multi_tensor
