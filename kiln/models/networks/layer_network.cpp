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

std::vector<Json> perceptron_layers(const PerceptronLayers& shape, int64_t out) {
  std::vector<Json> layers;
  for (int64_t width : shape.hidden) {
    layers.push_back(layer("linear", {{"out", width}}));
    if (shape.batchnorm) layers.push_back("batchnorm");
    layers.push_back(enum_name(shape.activation));
    if (shape.dropout > 0) layers.push_back(layer("dropout", {{"p", shape.dropout}}));
  }
  layers.push_back(layer("linear", {{"out", out}}));
  return layers;
}

}  // namespace kiln::models
