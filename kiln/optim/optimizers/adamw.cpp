// adamw: Adam with decoupled weight decay.

#include "kiln/optim/optimizer.h"
#include "kiln/optim/optimizers/adam_options.h"
#include "kiln/optim/optimizers/adam_step.h"

namespace kiln::optim {
namespace {

struct AdamWOptions : AdamOptionsBase {
  AdamWOptions() : AdamOptionsBase(0.01) {}
  void describe(Schema& s) {
    AdamOptionsBase::describe(s, "Decoupled weight decay, applied to the weights directly.");
  }
};

class AdamW : public torch::optim::AdamW {
 public:
  AdamW(const AdamWOptions& o, std::vector<torch::Tensor> params)
      : torch::optim::AdamW(std::move(params), torch::optim::AdamWOptions(o.lr)
                                                   .betas({o.betas[0], o.betas[1]})
                                                   .eps(o.eps)
                                                   .weight_decay(o.weight_decay)
                                                   .amsgrad(o.amsgrad)) {}
  // LibTorch's step with multi-tensor operators (adam_step.h).
  torch::Tensor step(LossClosure closure = nullptr) override {
    return multi_tensor::step_groups(closure, param_groups_, [this](auto& group) {
      adam_group_step<torch::optim::AdamWParamState, torch::optim::AdamWOptions>(
          group, state_, WeightDecay::kDecoupled, "AdamW");
    });
  }
};

}  // namespace

KILN_REGISTER(optimizer_registry, "adamw", AdamW, AdamWOptions,
              "AdamW (Loshchilov & Hutter): Adam with weight decay decoupled from the gradient.");

}  // namespace kiln::optim
