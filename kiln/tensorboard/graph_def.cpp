#include "kiln/tensorboard/graph_def.h"

#include <map>
#include <set>

#include "kiln/core/error.h"
#include "kiln/tensorboard/proto/event.pb.h"
#include "kiln/tensorboard/proto/graph.pb.h"

namespace kiln::tensorboard {
namespace {

// TensorFlow's GraphDef version of the 2.x releases; TensorBoard only shows it.
constexpr int kGraphDefProducer = 22;

proto::DataType data_type(const std::string& dtype) {
  static const std::map<std::string, proto::DataType> types = {
      {"float32", proto::DT_FLOAT},     {"float64", proto::DT_DOUBLE}, {"float16", proto::DT_HALF},
      {"bfloat16", proto::DT_BFLOAT16}, {"int64", proto::DT_INT64},    {"int32", proto::DT_INT32},
      {"uint8", proto::DT_UINT8},       {"bool", proto::DT_BOOL}};
  auto found = types.find(dtype);
  return found == types.end() ? proto::DT_INVALID : found->second;
}

void set_shape(proto::TensorShapeProto& out, const std::vector<int64_t>& shape) {
  for (int64_t size : shape) out.add_dim()->set_size(size);
}

void write_node(const GraphNode& node, proto::NodeDef& out) {
  out.set_name(graph_node_name(node.name));
  out.set_op(node.op);
  for (const std::string& input : node.inputs) out.add_input(graph_node_name(input));
  auto& attributes = *out.mutable_attr();
  // What the tab labels the node's outgoing edges with.
  set_shape(*attributes["_output_shapes"].mutable_list()->add_shape(), node.shape);
  if (node.op == "Placeholder" || node.op == "Variable") {
    attributes["dtype"].set_type(data_type(node.dtype));
    set_shape(*attributes["shape"].mutable_shape(), node.shape);
  } else {
    attributes["T"].set_type(data_type(node.dtype));
  }
}

}  // namespace

std::string graph_node_name(const std::string& name) {
  // TensorFlow's rule: [A-Za-z0-9.][A-Za-z0-9_>./]*
  auto allowed = [](char c, bool first) {
    bool plain =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.';
    return plain || (!first && (c == '_' || c == '>' || c == '/'));
  };
  std::string valid = name.empty() || !allowed(name.front(), true) ? "n" + name : name;
  for (size_t i = 1; i < valid.size(); ++i)
    if (!allowed(valid[i], false)) valid[i] = '_';
  return valid;
}

proto::Event graph_event(const std::vector<GraphNode>& nodes, double wall_time) {
  proto::GraphDef graph;
  graph.mutable_versions()->set_producer(kGraphDefProducer);
  std::set<std::string> names;
  for (const GraphNode& node : nodes) {
    proto::NodeDef& out = *graph.add_node();
    write_node(node, out);
    KILN_ASSERT(names.insert(out.name()).second);
  }
  proto::Event event;
  event.set_wall_time(wall_time);
  event.set_graph_def(graph.SerializeAsString());
  return event;
}

}  // namespace kiln::tensorboard
