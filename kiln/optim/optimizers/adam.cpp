// adam: Adam with L2 weight decay added to the gradient.

#include "kiln/optim/optimizer.h"
#include "kiln/optim/optimizers/adam_options.h"

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
};

}  // namespace

KILN_REGISTER(optimizer_registry, "adam", Adam, AdamOptions,
              "Adam (Kingma & Ba), weight decay as an L2 term in the gradient.");

}  // namespace kiln::optim
