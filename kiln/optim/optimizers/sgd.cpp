// sgd: stochastic gradient descent with optional (Nesterov) momentum.

#include "kiln/optim/optimizer.h"
#include "kiln/optim/optimizers/multi_tensor.h"

namespace kiln::optim {
namespace {

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  void describe(Schema& s) {
    s.field("lr", lr, "Learning rate.").min(0);
    s.field("momentum", momentum, "Momentum factor.").min(0);
    s.field("dampening", dampening, "Dampening of the momentum.").min(0);
    s.field("weight_decay", weight_decay, "L2 penalty added to the gradient.").min(0);
    // Fields are read in this order, so momentum and dampening are known here.
    s.field("nesterov", nesterov, "Use Nesterov momentum (needs momentum > 0, dampening 0).")
        .check([this](bool on) { return !on || (momentum > 0 && dampening == 0); },
               "false unless momentum > 0 and dampening is 0");
  }
};

class Sgd : public torch::optim::SGD {
 public:
  Sgd(const SgdOptions& o, std::vector<torch::Tensor> params)
      : torch::optim::SGD(std::move(params), torch::optim::SGDOptions(o.lr)
                                                 .momentum(o.momentum)
                                                 .dampening(o.dampening)
                                                 .weight_decay(o.weight_decay)
                                                 .nesterov(o.nesterov)) {}

  // LibTorch's step with multi-tensor operators (multi_tensor.h).
  torch::Tensor step(LossClosure closure = nullptr) override {
    return multi_tensor::step_groups(closure, param_groups_,
                                     [this](auto& group) { group_step(group); });
  }

 private:
  void group_step(torch::optim::OptimizerParamGroup& group) {
    namespace mt = multi_tensor;
    mt::Updated updated = mt::with_gradients(group, "SGD");
    if (updated.empty()) return;
    const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
    std::vector<torch::Tensor> steps = updated.grads;
    if (options.weight_decay() != 0)
      steps = at::_foreach_add(steps, updated.params, options.weight_decay());
    if (options.momentum() != 0) {
      std::vector<torch::Tensor> buffers = momentum_buffers(updated.params, steps, options);
      if (options.nesterov())
        steps = at::_foreach_add(steps, buffers, options.momentum());
      else
        steps = buffers;
    }
    at::_foreach_add_(updated.params, steps, -options.lr());
  }

  // Each parameter's momentum buffer after this step: a copy of its first step, then
  // momentum * buffer + (1 - dampening) * step.
  std::vector<torch::Tensor> momentum_buffers(const std::vector<torch::Tensor>& params,
                                              const std::vector<torch::Tensor>& steps,
                                              const torch::optim::SGDOptions& options) {
    std::vector<torch::Tensor> buffers, carried, carried_steps;
    for (size_t i = 0; i < params.size(); ++i) {
      bool fresh = false;
      auto& state = multi_tensor::state_for<torch::optim::SGDParamState>(state_, params[i], [&] {
        fresh = true;
        auto made = std::make_unique<torch::optim::SGDParamState>();
        made->momentum_buffer(torch::clone(steps[i]).detach());
        return made;
      });
      buffers.push_back(state.momentum_buffer());
      if (fresh) continue;
      carried.push_back(state.momentum_buffer());
      carried_steps.push_back(steps[i]);
    }
    if (!carried.empty()) {
      at::_foreach_mul_(carried, options.momentum());
      at::_foreach_add_(carried, carried_steps, 1 - options.dampening());
    }
    return buffers;
  }
};

}  // namespace

KILN_REGISTER(optimizer_registry, "sgd", Sgd, SgdOptions,
              "Stochastic gradient descent with optional momentum and weight decay.");

}  // namespace kiln::optim
