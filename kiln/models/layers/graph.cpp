// graph: branches inside a model. Named nodes each take one or more earlier nodes (or `input`),
// merge them by `add` or `concat` (along channels), and apply their own layers; the output node's
// value leaves the graph. As a model's first layer over tabular data with named inputs
// (`inputs: {wide: [...], deep: [...]}`), its nodes also take each named part of the row.
//
//   {type: graph, nodes: [{name: a, layers: [...]}, {name: b, inputs: [input], layers: [...]},
//                         {name: out, inputs: [a, b], merge: concat}]}

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "kiln/core/suggest.h"
#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

// How a graph node combines several inputs; none ("") is for a node that takes one.
enum class GraphMerge { kNone, kAdd, kConcat };
EnumNameList<GraphMerge> enum_names(GraphMerge) {
  return {{GraphMerge::kNone, ""}, {GraphMerge::kAdd, "add"}, {GraphMerge::kConcat, "concat"}};
}

constexpr const char* kInput = "input";

struct GraphNodeOptions {
  std::string name;
  std::vector<std::string> inputs;
  GraphMerge merge = GraphMerge::kNone;
  LayerList layers;
  void describe(Schema& s) {
    s.field("name", name, "How later nodes and `output` refer to this node.").require();
    s.field("inputs", inputs,
            "Earlier nodes (or `input`, or a named input of tabular data) this node takes; empty "
            "for the node before it.");
    s.field("merge", merge, "How several inputs combine: add, or concat along channels.");
    s.field("layers", layers, "Layers applied after the merge; none passes it through.");
  }
};

struct GraphOptions {
  std::vector<GraphNodeOptions> nodes;
  std::string output;
  void describe(Schema& s) {
    s.field("nodes", nodes, "The nodes, each after the nodes it takes.")
        .check([](const auto& list) { return !list.empty(); }, "with at least one node")
        .require();
    s.field("output", output, "The node whose value leaves the graph; empty for the last.");
  }
};

// One node as built: where its inputs are in the list of values (0 = the graph's input), how they
// merge, and its layers.
struct GraphNode {
  std::vector<size_t> inputs;
  bool concat = false;
  LayerStack layers;
};

class GraphImpl : public torch::nn::Module {
 public:
  /// `parts` are the named parts of the row, values 1.. after the input; the nodes follow.
  GraphImpl(std::vector<GraphNode> nodes, const std::vector<std::string>& node_names,
            std::vector<InputPart> parts, size_t output)
      : nodes_(std::move(nodes)), parts_(std::move(parts)), output_(output) {
    for (size_t i = 0; i < nodes_.size(); ++i) register_module(node_names[i], nodes_[i].layers);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    std::vector<torch::Tensor> values{x};
    for (const auto& part : parts_)
      values.push_back(x.flatten(1).narrow(1, part.offset, part.width));
    for (auto& node : nodes_) {
      torch::Tensor merged = values[node.inputs[0]];
      if (node.concat) {
        std::vector<torch::Tensor> parts;
        for (size_t i : node.inputs) parts.push_back(values[i]);
        merged = torch::cat(parts, 1);
      } else {
        for (size_t k = 1; k < node.inputs.size(); ++k) merged = merged + values[node.inputs[k]];
      }
      values.push_back(node.layers->is_empty() ? merged : call(node.layers, merged));
    }
    return values[output_];
  }

 private:
  std::vector<GraphNode> nodes_;
  std::vector<InputPart> parts_;
  size_t output_;
};

class Graph : public Layer {
 public:
  explicit Graph(const GraphOptions& options) : options_(options) {}

  BuiltLayer build(const Shape& input) const override { return build_in(input, BuildScope{}); }

  BuiltLayer build_in(const Shape& input, const BuildScope& scope) const override {
    std::vector<std::string> names{kInput};
    std::vector<Shape> shapes{input};
    std::vector<InputPart> parts;
    if (scope.row_parts) parts = scope.row_parts->parts;
    for (const auto& part : parts) {
      names.push_back(part.name);
      shapes.push_back({part.width});
    }
    size_t first_node = names.size();
    std::vector<GraphNode> nodes;
    for (const auto& o : options_.nodes) {
      check_name(o.name, names);
      GraphNode node;
      node.inputs = input_indices(o, names, first_node);
      node.concat = o.merge == GraphMerge::kConcat;
      Shape merged = merged_shape(o, node.inputs, shapes);
      BuiltStack stack = build_stack(o.layers, merged, scope);
      node.layers = stack.modules;
      names.push_back(o.name);
      shapes.push_back(stack.output);
      nodes.push_back(std::move(node));
    }
    size_t output = output_index(names, first_node);
    check_all_used(nodes, names, first_node, output);
    names.erase(names.begin(), names.begin() + std::ptrdiff_t(first_node));
    auto module = std::make_shared<GraphImpl>(std::move(nodes), names, parts, output);
    return {torch::nn::AnyModule(module), shapes[output]};
  }

 private:
  static void check_name(const std::string& name, const std::vector<std::string>& taken) {
    KILN_CHECK(!name.empty() && name.find('.') == std::string::npos,
               "graph node name \"{}\" must be non-empty and without dots", name);
    KILN_CHECK(std::find(taken.begin(), taken.end(), name) == taken.end(),
               "graph node name \"{}\" is taken{}", name,
               name == kInput ? " by the graph's input" : " by an earlier node or named input");
  }

  // A node that names none takes the node before it; the first node, the graph's input.
  static std::vector<size_t> input_indices(const GraphNodeOptions& o,
                                           const std::vector<std::string>& earlier,
                                           size_t first_node) {
    if (o.inputs.empty()) return {earlier.size() == first_node ? 0 : earlier.size() - 1};
    std::vector<size_t> indices;
    for (const auto& name : o.inputs) {
      auto found = std::find(earlier.begin(), earlier.end(), name);
      KILN_CHECK(found != earlier.end(),
                 "graph node \"{}\" takes \"{}\", not defined before it; {}", o.name, name,
                 suggestion_text(name, earlier));
      indices.push_back(size_t(found - earlier.begin()));
    }
    KILN_CHECK(
        indices.size() == 1 || o.merge != GraphMerge::kNone,
        "graph node \"{}\" takes {} inputs; say how they combine: merge: add or merge: concat",
        o.name, indices.size());
    return indices;
  }

  static Shape merged_shape(const GraphNodeOptions& o, const std::vector<size_t>& inputs,
                            const std::vector<Shape>& shapes) {
    Shape merged = shapes[inputs[0]];
    for (size_t k = 1; k < inputs.size(); ++k) {
      const Shape& next = shapes[inputs[k]];
      bool add = o.merge == GraphMerge::kAdd;
      bool fits = add ? next == merged
                      : next.size() == merged.size() && !merged.empty() &&
                            std::equal(next.begin() + 1, next.end(), merged.begin() + 1);
      KILN_CHECK(fits, "graph node \"{}\" cannot {} {} and {}{}", o.name, enum_name(o.merge),
                 shape_text(merged), shape_text(next),
                 add ? "; add needs equal shapes"
                     : "; concat joins channels and needs the other sizes equal");
      if (o.merge == GraphMerge::kConcat) merged[0] += next[0];
    }
    return merged;
  }

  size_t output_index(const std::vector<std::string>& names, size_t first_node) const {
    if (options_.output.empty()) return names.size() - 1;
    auto nodes = names.begin() + std::ptrdiff_t(first_node);
    auto found = std::find(nodes, names.end(), options_.output);
    KILN_CHECK(found != names.end(), "graph output \"{}\" is not a node; {}", options_.output,
               suggestion_text(options_.output, {nodes, names.end()}));
    return size_t(found - names.begin());
  }

  // A node the output does not depend on would hold weights that never learn.
  static void check_all_used(const std::vector<GraphNode>& nodes,
                             const std::vector<std::string>& names, size_t first_node,
                             size_t output) {
    std::set<size_t> needed{output};
    for (size_t i = output; i >= first_node; --i)
      if (needed.count(i))
        for (size_t input : nodes[i - first_node].inputs) needed.insert(input);
    std::vector<std::string> unused;
    for (size_t i = first_node; i < names.size(); ++i)
      if (!needed.count(i)) unused.push_back(names[i]);
    KILN_CHECK(unused.empty(), "graph nodes {} do not lead to the output \"{}\"",
               fmt::join(unused, ", "), names[output]);
  }

  GraphOptions options_;
};

}  // namespace

KILN_REGISTER(layer_registry, "graph", Graph, GraphOptions,
              "Named nodes with `inputs:` merged by add or concat, for branching models.");

}  // namespace kiln::models
