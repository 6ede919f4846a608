#pragma once
// Layers of a `sequential` model. A layer entry in the config is a builder: given the shape of
// one example arriving at it, it makes the torch module and reports the shape leaving it. So
// configs never repeat input sizes (`{type: linear, out: 10}`, no in_features), and a wrong
// stacking fails at build time naming the layer path and both shapes.
// Layers that hold other layers (residual, graph, block) build them through `build_stack`, with a
// BuildScope carrying the named blocks the model defines.
// Thread-safety: builders are used once, on one thread.

#include <torch/torch.h>

#include <map>
#include <string>
#include <vector>

#include "kiln/core/input_layout.h"
#include "kiln/core/registry.h"
#include "kiln/models/observe.h"

namespace kiln::models {

/// Shape of one example, without the batch dimension.
using Shape = std::vector<int64_t>;

/// `[1, 28, 28]`, for messages.
std::string shape_text(const Shape& shape);

/// How many elements an example of `shape` holds (1 for []).
int64_t element_count(const Shape& shape);

struct BuiltLayer {
  torch::nn::AnyModule module;
  Shape output;
};

/// A list of layers as an option (`layers: [...]`, `body: [...]`).
struct LayerList : ComponentList {
  LayerList() : ComponentList("layer") {}
};

/// What layers holding other layers need while building: the model's named blocks
/// (`blocks: {NAME: [layers]}`), the blocks being expanded, outermost first, to catch a block
/// that contains itself, and the named parts of the model's input row (`inputs: {wide: [...]}`),
/// which only a layer that receives the row itself sees: a graph's nodes take them by name.
struct BuildScope {
  const std::map<std::string, LayerList>* blocks = nullptr;
  std::vector<std::string> expanding;
  const InputLayout* row_parts = nullptr;
};

class Layer {
 public:
  virtual ~Layer() = default;
  /// Builds the module for inputs of shape `input`; throws kiln::Error when it cannot take them.
  virtual BuiltLayer build(const Shape& input) const = 0;
  /// As build(); layers that hold other layers override it to reach the model's blocks.
  virtual BuiltLayer build_in(const Shape& input, const BuildScope& scope) const {
    (void)scope;
    return build(input);
  }
};

using LayerRegistry = Registry<Layer>;
LayerRegistry& layer_registry();

/// A torch Sequential with a plain Tensor -> Tensor forward, so that it fits in an AnyModule and
/// stacks can nest; it observes each layer's call (see observe.h).
class LayerStackImpl : public torch::nn::SequentialImpl {
 public:
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(const torch::Tensor& input);
};
TORCH_MODULE(LayerStack);

/// Layers built one after another, each for the shape the previous one leaves.
struct BuiltStack {
  LayerStack modules;
  Shape output;
};

/// The spec of a layer given as JSON (`"relu"`, `{"type": "linear", "out": 10}`), checked and with
/// defaults filled, as if read from the config at `path`: how networks made of layers, and layers
/// that add layers (a residual's projection), write them.
ComponentSpec make_layer_spec(const Json& layer, const std::string& path);

/// make_layer_spec over a list; errors name `path`.
LayerList make_layer_list(const std::vector<Json>& layers, const std::string& path);

/// Builds `layers` from `input`; a layer that cannot take its input fails with a ConfigError at
/// that layer's config path.
BuiltStack build_stack(const LayerList& layers, const Shape& input, const BuildScope& scope);

}  // namespace kiln::models

namespace kiln {

template <>
struct OptionTraits<models::LayerList> {
  static void read(const Json& value, models::LayerList& out, const ReadContext& ctx) {
    OptionTraits<ComponentList>::read(value, out, ctx);
  }
  static Json write(const models::LayerList& value) {
    return OptionTraits<ComponentList>::write(value);
  }
  static std::string type_name(const models::LayerList&) { return "list of layer"; }
};

}  // namespace kiln
