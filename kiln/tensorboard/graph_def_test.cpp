// The GraphDef of TensorBoard's Graphs tab, decoded by the tests' own decoder: nodes, inputs,
// the shapes that label edges, dtypes, and names made valid for TensorFlow.

#include "kiln/tensorboard/graph_def.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/tensorboard/proto/event.pb.h"
#include "tests/support/event_file_reader.h"

namespace kiln::tensorboard {
namespace {

using ::testing::ElementsAre;

TEST(GraphDef, NodesCarryTheirInputsShapesAndTypes) {
  std::vector<GraphNode> nodes = {
      {"input", "Placeholder", {}, {-1, 4}, "float32"},
      {"fc/weight", "Variable", {}, {2, 4}, "float32"},
      {"fc/Linear", "Linear", {"input", "fc/weight"}, {-1, 2}, "float32"},
      {"logits", "Identity", {"fc/Linear"}, {-1, 2}, "float32"}};
  testing::DecodedEvent event = testing::decode_event(graph_event(nodes, 3.0).SerializeAsString());
  EXPECT_EQ(event.wall_time, 3.0);
  testing::DecodedGraph graph = testing::decode_graph_def(event.graph_def);
  EXPECT_EQ(graph.producer, 22);
  ASSERT_EQ(graph.nodes.size(), 4u);
  const testing::DecodedNode& linear = graph.nodes[2];
  EXPECT_EQ(linear.name, "fc/Linear");
  EXPECT_EQ(linear.op, "Linear");
  EXPECT_THAT(linear.inputs, ElementsAre("input", "fc/weight"));
  ASSERT_EQ(linear.attrs.count("_output_shapes"), 1u);
  EXPECT_THAT(linear.attrs.at("_output_shapes").list_shapes,
              ElementsAre(std::vector<int64_t>{-1, 2}));
  EXPECT_EQ(linear.attrs.at("T").type, 1) << "DT_FLOAT";
  const testing::DecodedNode& input = graph.nodes[0];
  EXPECT_EQ(input.op, "Placeholder");
  EXPECT_EQ(input.attrs.at("dtype").type, 1);
  EXPECT_EQ(input.attrs.at("shape").shape, (std::vector<int64_t>{-1, 4}));
}

TEST(GraphDef, NamesAreMadeValidForTensorFlowWithTheirInputs) {
  EXPECT_EQ(graph_node_name("head-1/Linear"), "head_1/Linear");
  EXPECT_EQ(graph_node_name("_x"), "n_x");
  EXPECT_EQ(graph_node_name(""), "n");
  EXPECT_EQ(graph_node_name("a.b/c_d>e"), "a.b/c_d>e");
  std::vector<GraphNode> nodes = {{"in put", "Placeholder", {}, {-1}, "int64"},
                                  {"out", "Identity", {"in put"}, {-1}, "int64"}};
  testing::DecodedGraph graph = testing::decode_graph_def(
      testing::decode_event(graph_event(nodes, 0).SerializeAsString()).graph_def);
  EXPECT_EQ(graph.nodes[0].name, "in_put");
  EXPECT_EQ(graph.nodes[0].attrs.at("dtype").type, 9) << "DT_INT64";
  EXPECT_THAT(graph.nodes[1].inputs, ElementsAre("in_put"));
}

}  // namespace
}  // namespace kiln::tensorboard
