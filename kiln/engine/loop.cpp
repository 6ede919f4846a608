#include "kiln/engine/loop.h"

#include "kiln/engine/objective.h"

namespace kiln::engine {

LoopRegistry& loop_registry() {
  static LoopRegistry registry(
      "loop", "What a training step computes: supervised, a mean teacher or a distillation.");
  return registry;
}

torch::Tensor Loop::counted_loss(const Objective& objective) const { return objective.last_loss(); }

std::unique_ptr<Loop> supervised_loop() {
  ComponentSpec spec("loop", Json{{"type", "supervised"}});
  spec.path = "loop";
  std::unique_ptr<Loop> loop = loop_registry().create(spec);
  loop->type = "supervised";
  loop->config_path = "loop";
  return loop;
}

}  // namespace kiln::engine
