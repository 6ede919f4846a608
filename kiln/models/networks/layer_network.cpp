#include "kiln/models/networks/layer_network.h"

namespace kiln::models {

LayerNetwork::LayerNetwork(const std::vector<Json>& layers, const Shape& input,
                           std::string output_name)
    : output_name_(std::move(output_name)) {
  BuiltStack stack = build_stack(make_layer_list(layers, "model"), input, BuildScope{});
  layers_ = register_module("layers", stack.modules);
  output_ = stack.output;
}

Json layer(const std::string& type, Json options) {
  options["type"] = type;
  return options;
}

}  // namespace kiln::models
