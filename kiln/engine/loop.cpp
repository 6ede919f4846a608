#include "kiln/engine/loop.h"

namespace kiln::engine {

LoopRegistry& loop_registry() {
  static LoopRegistry registry(
      "loop", "What a training step computes: supervised, or a distillation from a teacher.");
  return registry;
}

std::unique_ptr<Loop> supervised_loop() {
  ComponentSpec spec("loop", Json{{"type", "supervised"}});
  spec.path = "loop";
  std::unique_ptr<Loop> loop = loop_registry().create(spec);
  loop->type = "supervised";
  loop->config_path = "loop";
  return loop;
}

}  // namespace kiln::engine
