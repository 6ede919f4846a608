// rmsprop: RMSprop (Hinton's lecture 6e), dividing the gradient by a running root mean square,
// optionally centred and with momentum.

#include "kiln/optim/optimizer.h"

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
};

}  // namespace

KILN_REGISTER(optimizer_registry, "rmsprop", Rmsprop, RmspropOptions,
              "RMSprop: gradients divided by their running root mean square.");

}  // namespace kiln::optim
