#include "kiln/models/networks/layer_network.h"

namespace kiln::models {

LayerNetwork::LayerNetwork(const std::vector<Json>& layers, const Shape& input,
                           std::string output_name)
    : LayerNetwork(build_stack(make_layer_list(layers, "model"), input, BuildScope{}),
                   std::move(output_name)) {}

LayerNetwork::LayerNetwork(BuiltStack stack, std::string output_name)
    : layers_(register_module("layers", stack.modules)),
      output_(std::move(stack.output)),
      output_name_(std::move(output_name)) {}

Json layer(const std::string& type, Json options) {
  options["type"] = type;
  return options;
}

}  // namespace kiln::models
