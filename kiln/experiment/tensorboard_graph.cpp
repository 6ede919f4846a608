#include "kiln/experiment/tensorboard_graph.h"

#include "kiln/models/layer_graph.h"

namespace kiln::experiment {

std::vector<tensorboard::GraphNode> model_graph(models::Model& model, const ModelInput& input) {
  std::vector<tensorboard::GraphNode> nodes;
  for (models::LayerNode& layer : models::layer_graph(model, input.shape, input.dtype))
    nodes.push_back({std::move(layer.name), std::move(layer.op), std::move(layer.inputs),
                     std::move(layer.shape), std::move(layer.dtype)});
  return nodes;
}

void write_model_graph(tensorboard::EventLog& log, models::Model& model, const ModelInput& input,
                       double wall_time) {
  log.graph("train", model_graph(model, input), wall_time);
  log.flush();
}

}  // namespace kiln::experiment
