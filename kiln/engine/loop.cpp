#include "kiln/engine/loop.h"

#include <fmt/format.h>

#include "kiln/engine/objective.h"
#include "kiln/models/layer.h"

namespace kiln::engine {

LoopRegistry& loop_registry() {
  static LoopRegistry registry(
      "loop", "What a training step computes: supervised, a mean teacher or a distillation.");
  return registry;
}

torch::Tensor Loop::counted_loss(const Objective& objective) const { return objective.last_loss(); }

void require_class_logits(const models::Model& model, const std::string& config_path,
                          const std::string& loop) {
  if (!model.heads().empty())
    throw ConfigError(config_path, "",
                      loop + " trains a model of one output; this one has several heads");
  models::Shape out = model.output_shape();
  if (out.size() != 1 || out[0] < 2)
    throw ConfigError(config_path, "",
                      fmt::format("{} needs a model whose output is one vector of class logits; "
                                  "this one gives {}",
                                  loop, models::shape_text(out)));
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
