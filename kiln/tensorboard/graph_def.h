#pragma once
// A model's graph as TensorBoard's Graphs tab reads it: a GraphDef (graph.proto) in an event's
// graph_def field. Nodes are named by `/`-separated scopes (a layer's module path), which the tab
// draws as boxes that open; each edge is labelled with the shape its `_output_shapes` attribute
// gives. kiln describes the graph (models/layer_graph.h); this writes it.
// Thread-safety: functions of their arguments.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::tensorboard {

namespace proto {
class Event;
}

/// One node: an operation (`op`: a layer's type, "Add" where a block merges its branches,
/// "Placeholder" for the input, "Variable" for a parameter) and the nodes whose output it takes.
struct GraphNode {
  std::string name;  // scopes separated by /; graph_node_name() makes it valid
  std::string op;
  std::vector<std::string> inputs;
  std::vector<int64_t> shape;     // its output's shape; -1 for the batch dimension
  std::string dtype = "float32";  // float32, float64, float16, bfloat16, int64, int32, uint8, bool
};

/// An event holding `nodes` as a GraphDef. Names are made valid for TensorFlow (and inputs
/// renamed with them); a repeated name is a programming error.
proto::Event graph_event(const std::vector<GraphNode>& nodes, double wall_time);

/// `name` with each character TensorFlow does not allow in a node name replaced by '_'.
std::string graph_node_name(const std::string& name);

}  // namespace kiln::tensorboard
