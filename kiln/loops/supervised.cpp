// supervised: the config's loss (or the heads' weighted losses) of the model's outputs against
// the data's targets; what every config without a `loop:` trains.

#include "kiln/engine/loop.h"
#include "kiln/engine/objective.h"

namespace kiln::loops {
namespace {

using engine::Loop;
using engine::Objective;

class Supervised : public Loop {
 public:
  explicit Supervised(const NoOptions&) {}
  torch::Tensor batch_loss(models::Model& model, Objective& objective,
                           const data::Batch& batch) override {
    return objective.compute(model, batch);
  }
};

}  // namespace

KILN_REGISTER(engine::loop_registry, "supervised", Supervised, NoOptions,
              "The config's loss of the model's outputs against the data's targets.");

}  // namespace kiln::loops
