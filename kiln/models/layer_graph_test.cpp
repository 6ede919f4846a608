// The layer graph: nodes named by module path, parameters as their own nodes, and edges taken
// from autograd, checked on small models whose dataflow is known: a chain, a residual block (the
// skip reaches the merge), a ResNet whose blocks add in tensor arithmetic, and integer inputs.

#include "kiln/models/layer_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/components.h"

namespace kiln::models {
namespace layer_graph_test {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

std::shared_ptr<Model> build(const std::string& config, const Shape& input) {
  return build_model(read_spec("model", config), input);
}

const LayerNode& node(const std::vector<LayerNode>& graph, const std::string& name) {
  for (const LayerNode& n : graph)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

std::vector<std::string> names(const std::vector<LayerNode>& graph) {
  std::vector<std::string> all;
  for (const LayerNode& n : graph) all.push_back(n.name);
  return all;
}

TEST(LayerGraph, AChainTakesEachLayerFromTheOneBefore) {
  auto model = build(
      "{type: sequential, layers: [flatten, {type: linear, out: 4}, relu, {type: linear, out: 3}]}",
      {2, 3});
  std::vector<LayerNode> graph = layer_graph(*model, {2, 3}, torch::kFloat32);
  EXPECT_THAT(names(graph),
              ElementsAre("input", "layers/0/Flatten", "layers/1/weight", "layers/1/bias",
                          "layers/1/Linear", "layers/2/ReLU", "layers/3/weight", "layers/3/bias",
                          "layers/3/Linear", "output"));
  EXPECT_EQ(node(graph, "input").op, "Placeholder");
  EXPECT_EQ(node(graph, "input").shape, Shape({-1, 2, 3}));
  EXPECT_THAT(node(graph, "layers/0/Flatten").inputs, ElementsAre("input"));
  EXPECT_THAT(node(graph, "layers/1/Linear").inputs,
              ElementsAre("layers/0/Flatten", "layers/1/weight", "layers/1/bias"));
  EXPECT_EQ(node(graph, "layers/1/weight").op, "Variable");
  EXPECT_EQ(node(graph, "layers/1/weight").shape, Shape({4, 6}));
  EXPECT_THAT(node(graph, "layers/2/ReLU").inputs, ElementsAre("layers/1/Linear"));
  EXPECT_EQ(node(graph, "layers/3/Linear").shape, Shape({-1, 3}));
  EXPECT_EQ(node(graph, "output").op, "Identity");
  EXPECT_THAT(node(graph, "output").inputs, ElementsAre("layers/3/Linear"));
  EXPECT_EQ(node(graph, "output").dtype, "float32");
  EXPECT_TRUE(model->is_training()) << "the model's mode is left as it was";
}

TEST(LayerGraph, AResidualBlocksSkipReachesWhereItMerges) {
  auto model = build(
      "{type: sequential, layers: [{type: linear, out: 3}, "
      "{type: residual, body: [{type: linear, out: 3}], activation: relu}]}",
      {3});
  std::vector<LayerNode> graph = layer_graph(*model, {3}, torch::kFloat32);
  // The activation reads body + input: both come into it.
  const LayerNode& merge = node(graph, "layers/1/activation/ReLU");
  EXPECT_THAT(merge.inputs, UnorderedElementsAre("layers/1/body/0/Linear", "layers/0/Linear"));
  EXPECT_EQ(node(graph, "layers/1/body/0/Linear").inputs[0], "layers/0/Linear");
}

TEST(LayerGraph, BlocksThatAddInTensorArithmeticGetANodeOfTheirOwn) {
  auto model = build("{type: resnet, depth: 8, num_classes: 10}", {3, 8, 8});
  std::vector<LayerNode> graph = layer_graph(*model, {3, 8, 8}, torch::kFloat32);
  // A basic block: relu(bn2(...) + x) is made by the block itself from its last batch norm and
  // its input, the stem's output here.
  const LayerNode* block = nullptr;
  for (const LayerNode& n : graph)
    if (n.name.rfind("layer1/0/", 0) == 0 && n.name.find("/bn") == std::string::npos &&
        n.name.find("/conv") == std::string::npos)
      block = &n;
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->name, "layer1/0/Relu");
  ASSERT_EQ(block->inputs.size(), 2u);
  EXPECT_EQ(block->inputs[0], "layer1/0/bn2/BatchNorm2d");
  EXPECT_EQ(block->inputs[1].rfind("layer1/0/", 0), std::string::npos) << "the skip";
  EXPECT_EQ(block->shape, Shape({-1, 16, 8, 8}));
  EXPECT_EQ(graph.back().op, "Identity");
  EXPECT_THAT(graph.back().inputs, ElementsAre("fc/Linear"));
}

TEST(LayerGraph, IntegerInputsAreFollowedByIdentity) {
  auto model = build(
      "{type: sequential, layers: [{type: embedding, entries: 5, dim: 3}, flatten, "
      "{type: linear, out: 2}]}",
      {4});
  std::vector<LayerNode> graph = layer_graph(*model, {4}, torch::kInt64);
  EXPECT_EQ(node(graph, "input").dtype, "int64");
  EXPECT_THAT(node(graph, "layers/0/Embedding").inputs, ElementsAre("input", "layers/0/weight"));
  EXPECT_EQ(node(graph, "layers/2/Linear").inputs[0], "layers/1/Flatten");
}

}  // namespace layer_graph_test
}  // namespace kiln::models
