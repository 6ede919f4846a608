#pragma once
// The dataflow of a model's layers, found by running it once on a zero example (eval mode) with
// its calls observed (observe.h): a node per call of a leaf module, named by its module path
// ("layer1/0/conv1/Conv2d"), a node per parameter ("layer1/0/conv1/weight"), a node where a
// block combines its children's outputs with its own arithmetic (a residual's "layer1/0/Add",
// named by the autograd function that made it), the input, and one node per named output.
// Edges come from the autograd graph between the calls' outputs, so a skip connection or a
// branch taken by tensor arithmetic between layers is found, not guessed from the call order.
// TensorBoard's Graphs tab shows it (experiment/tensorboard_graph.h).
// Thread-safety: runs the model on the calling thread.

#include <string>
#include <vector>

#include "kiln/models/model.h"

namespace kiln::models {

struct LayerNode {
  std::string name;  // module path scopes separated by '/', then the operation
  std::string op;    // "Conv2d", "Add", "Placeholder" (the input), "Variable", "Identity" (output)
  std::vector<std::string> inputs;  // the nodes this one takes, data first, then parameters
  Shape shape;                      // of its output, -1 for the batch dimension
  std::string dtype;                // "float32", "int64", ...
};

/// The graph of `model` for examples of `input` (without the batch dimension) of `dtype`, in
/// the order the calls ended. Leaves the model's training mode as it was.
std::vector<LayerNode> layer_graph(Model& model, const Shape& input, torch::Dtype dtype);

}  // namespace kiln::models
