#include "kiln/models/layer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::models {

std::string shape_text(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

LayerRegistry& layer_registry() {
  static LayerRegistry registry("layer", "Layers of a sequential model; input sizes are inferred.");
  return registry;
}

}  // namespace kiln::models
