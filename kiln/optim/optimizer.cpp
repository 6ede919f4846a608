#include "kiln/optim/optimizer.h"

namespace kiln::optim {

OptimizerRegistry& optimizer_registry() {
  static OptimizerRegistry registry("optimizer", "Parameter update rules.");
  return registry;
}

double current_lr(const torch::optim::Optimizer& optimizer) {
  return optimizer.param_groups().front().options().get_lr();
}

}  // namespace kiln::optim
