// adam: Adam with L2 weight decay added to the gradient.

#include "kiln/optim/optimizer.h"
#include "kiln/optim/optimizers/adam_options.h"
#include "kiln/optim/optimizers/adam_step.h"

namespace kiln::optim {
namespace {

struct AdamOptions : AdamOptionsBase {
  AdamOptions() : AdamOptionsBase(0.0) {}
  void describe(Schema& s) { AdamOptionsBase::describe(s, "L2 penalty added to the gradient."); }
};

class Adam : public torch::optim::Adam {
 public:
  Adam(const AdamOptions& o, std::vector<torch::Tensor> params)
      : torch::optim::Adam(std::move(params), torch::optim::AdamOptions(o.lr)
                                                  .betas({o.betas[0], o.betas[1]})
                                                  .eps(o.eps)
                                                  .weight_decay(o.weight_decay)
                                                  .amsgrad(o.amsgrad)) {}
  // LibTorch's step with multi-tensor operators (adam_step.h).
  torch::Tensor step(LossClosure closure = nullptr) override {
    return multi_tensor::step_groups(closure, param_groups_, [this](auto& group) {
      adam_group_step<torch::optim::AdamParamState, torch::optim::AdamOptions>(
          group, state_, WeightDecay::kL2, "Adam");
    });
  }
};

}  // namespace

KILN_REGISTER(optimizer_registry, "adam", Adam, AdamOptions,
              "Adam (Kingma & Ba), weight decay as an L2 term in the gradient.");

}  // namespace kiln::optim
