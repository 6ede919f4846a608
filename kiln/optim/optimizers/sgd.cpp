// sgd: stochastic gradient descent with optional (Nesterov) momentum.

#include "kiln/optim/optimizer.h"

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
};

}  // namespace

KILN_REGISTER(optimizer_registry, "sgd", Sgd, SgdOptions,
              "Stochastic gradient descent with optional momentum and weight decay.");

}  // namespace kiln::optim
