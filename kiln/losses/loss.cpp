#include "kiln/losses/loss.h"

namespace kiln::losses {

LossRegistry& loss_registry() {
  static LossRegistry registry("loss", "Training objectives.");
  return registry;
}

}  // namespace kiln::losses
