#pragma once
// Layers of a `sequential` model. A layer entry in the config is a builder: given the shape of
// one example arriving at it, it makes the torch module and reports the shape leaving it. So
// configs never repeat input sizes (`{type: linear, out: 10}`, no in_features), and a wrong
// stacking fails at build time naming the layer path and both shapes.
// Thread-safety: builders are used once, on one thread.

#include <torch/torch.h>

#include <string>
#include <vector>

#include "kiln/core/registry.h"

namespace kiln::models {

/// Shape of one example, without the batch dimension.
using Shape = std::vector<int64_t>;

/// `[1, 28, 28]`, for messages.
std::string shape_text(const Shape& shape);

struct BuiltLayer {
  torch::nn::AnyModule module;
  Shape output;
};

class Layer {
 public:
  virtual ~Layer() = default;
  /// Builds the module for inputs of shape `input`; throws kiln::Error when it cannot take them.
  virtual BuiltLayer build(const Shape& input) const = 0;
};

using LayerRegistry = Registry<Layer>;
LayerRegistry& layer_registry();

}  // namespace kiln::models
