// rmsprop: RMSprop (Hinton's lecture 6e), dividing the gradient by a running root mean square,
// optionally centred and with momentum.

#include "kiln/optim/optimizer.h"
#include "kiln/optim/optimizers/multi_tensor.h"

namespace kiln::optim {
namespace {

struct RmspropOptions {
  double lr = 0.01;
  double alpha = 0.99;
  double eps = 1e-8;
  double momentum = 0.0;
  bool centered = false;
  double weight_decay = 0.0;
  void describe(Schema& s) {
    s.field("lr", lr, "Learning rate.").min(0);
    s.field("alpha", alpha, "Decay rate of the running mean of squared gradients.").in_range(0, 1);
    s.field("eps", eps, "Added to the denominator for numerical stability.").min(0);
    s.field("momentum", momentum, "Momentum factor.").min(0);
    s.field("centered", centered,
            "Divide by the running variance of the gradient instead of its mean square.");
    s.field("weight_decay", weight_decay, "L2 penalty added to the gradient.").min(0);
  }
};

class Rmsprop : public torch::optim::RMSprop {
 public:
  Rmsprop(const RmspropOptions& o, std::vector<torch::Tensor> params)
      : torch::optim::RMSprop(std::move(params), torch::optim::RMSpropOptions(o.lr)
                                                     .alpha(o.alpha)
                                                     .eps(o.eps)
                                                     .momentum(o.momentum)
                                                     .centered(o.centered)
                                                     .weight_decay(o.weight_decay)) {}

  // LibTorch's step with multi-tensor operators (multi_tensor.h).
  torch::Tensor step(LossClosure closure = nullptr) override {
    return multi_tensor::step_groups(closure, param_groups_,
                                     [this](auto& group) { group_step(group); });
  }

 private:
  struct Lists {
    std::vector<torch::Tensor> square_avgs, momentum_buffers, grad_avgs;
  };

  void group_step(torch::optim::OptimizerParamGroup& group) {
    namespace mt = multi_tensor;
    mt::Updated updated = mt::with_gradients(group, "RMSprop");
    if (updated.empty()) return;
    const auto& options = static_cast<const torch::optim::RMSpropOptions&>(group.options());
    Lists lists = states(updated.params, options);
    std::vector<torch::Tensor> grads = updated.grads;
    if (options.weight_decay() != 0)
      grads = at::_foreach_add(grads, updated.params, options.weight_decay());
    double alpha = options.alpha();
    at::_foreach_mul_(lists.square_avgs, alpha);
    at::_foreach_addcmul_(lists.square_avgs, grads, grads, 1 - alpha);
    std::vector<torch::Tensor> averages;
    if (options.centered()) {
      at::_foreach_mul_(lists.grad_avgs, alpha);
      at::_foreach_add_(lists.grad_avgs, grads, 1 - alpha);
      averages = at::_foreach_addcmul(lists.square_avgs, lists.grad_avgs, lists.grad_avgs, -1);
      at::_foreach_sqrt_(averages);
    } else {
      averages = at::_foreach_sqrt(lists.square_avgs);
    }
    at::_foreach_add_(averages, options.eps());
    if (options.momentum() > 0) {
      at::_foreach_mul_(lists.momentum_buffers, options.momentum());
      at::_foreach_addcdiv_(lists.momentum_buffers, grads, averages);
      at::_foreach_add_(updated.params, lists.momentum_buffers, -options.lr());
    } else {
      at::_foreach_addcdiv_(updated.params, grads, averages, -options.lr());
    }
  }

  // Each parameter's state, made as LibTorch's step makes it, its step counted.
  Lists states(const std::vector<torch::Tensor>& params,
               const torch::optim::RMSpropOptions& options) {
    Lists lists;
    for (const torch::Tensor& parameter : params) {
      auto& state =
          multi_tensor::state_for<torch::optim::RMSpropParamState>(state_, parameter, [&] {
            auto made = std::make_unique<torch::optim::RMSpropParamState>();
            made->step(0);
            made->square_avg(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
            if (options.momentum() > 0)
              made->momentum_buffer(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
            if (options.centered())
              made->grad_avg(torch::zeros_like(parameter, torch::MemoryFormat::Preserve));
            return made;
          });
      state.step(state.step() + 1);
      lists.square_avgs.push_back(state.square_avg());
      if (options.momentum() > 0) lists.momentum_buffers.push_back(state.momentum_buffer());
      if (options.centered()) lists.grad_avgs.push_back(state.grad_avg());
    }
    return lists;
  }
};

}  // namespace

KILN_REGISTER(optimizer_registry, "rmsprop", Rmsprop, RmspropOptions,
              "RMSprop: gradients divided by their running root mean square.");

}  // namespace kiln::optim
