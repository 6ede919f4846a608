// huber: squared error for errors within delta, linear beyond (torch.nn.functional.huber_loss):
// mse's smooth minimum with mae's tolerance of outliers.

#include "kiln/losses/loss.h"
#include "kiln/losses/same_shape.h"

namespace kiln::losses {
namespace {

struct HuberOptions {
  double delta = 1.0;
  void describe(Schema& s) {
    s.field("delta", delta, "Where the loss turns from quadratic to linear.")
        .check([](double d) { return d > 0; }, "> 0");
  }
};

class Huber : public Loss {
 public:
  explicit Huber(const HuberOptions& o) : delta_(o.delta) {}
  torch::Tensor forward(const torch::Tensor& output, const torch::Tensor& target) const override {
    return torch::nn::functional::huber_loss(
        output, same_shape_target("huber", output, target),
        torch::nn::functional::HuberLossFuncOptions().delta(delta_));
  }

 private:
  double delta_;
};

}  // namespace

KILN_REGISTER(loss_registry, "huber", Huber, HuberOptions,
              "Huber loss: squared error within delta, linear beyond; targets of the outputs' "
              "shape.");

}  // namespace kiln::losses
