// Layers that hold other layers: residual (identity, projection and given shortcuts), graph
// (branches merged by add or concat) and named blocks; their shapes, parameter names, forward
// values and the errors a wrong composition gives.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/models/model.h"
#include "tests/support/models.h"

namespace kiln::models {
namespace composition_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

using testing::forward_shape;

std::shared_ptr<Model> build(const std::string& body, const Shape& input) {
  return testing::build_sequential(body, input);
}

std::vector<std::string> parameter_names(const Model& model) {
  return model.named_parameters().keys();
}

// The ConfigError building `body` throws; fails the test when it builds.
ConfigError build_error(const std::string& body, const Shape& input) {
  try {
    build(body, input);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "built " << body;
  return ConfigError("", "", "");
}

TEST(Residual, AddsTheInputWhenTheBodyKeepsTheShape) {
  auto model = build("layers: [{type: residual, body: [{type: linear, out: 3}]}]", {3});
  EXPECT_THAT(parameter_names(*model),
              ElementsAre("layers.0.body.0.weight", "layers.0.body.0.bias"));
  torch::NoGradGuard no_grad;
  auto params = model->named_parameters();
  params["layers.0.body.0.weight"].copy_(torch::eye(3) * 2);
  params["layers.0.body.0.bias"].fill_(1);
  torch::Tensor x = torch::tensor({{1.0f, -2.0f, 3.0f}});
  EXPECT_TRUE(torch::equal(model->forward(x), x * 3 + 1));  // 2x + 1 + x
}

TEST(Residual, AppliesTheActivationAfterTheSum) {
  auto model = build(
      "layers: [{type: residual, body: [{type: linear, out: 2, bias: false}], activation: relu}]",
      {2});
  torch::NoGradGuard no_grad;
  model->named_parameters()["layers.0.body.0.weight"].zero_();
  torch::Tensor x = torch::tensor({{1.0f, -2.0f}});
  EXPECT_TRUE(torch::equal(model->forward(x), torch::tensor({{1.0f, 0.0f}})));
}

TEST(Residual, ProjectsTheShortcutWhenTheBodyChangesTheShape) {
  const Shape input = {4, 9, 9};
  auto model = build(
      "layers: [{type: residual, body: [{type: conv2d, out: 8, stride: 2, padding: 1}, batchnorm, "
      "relu, {type: conv2d, out: 8}, batchnorm], activation: relu}]",
      input);
  EXPECT_THAT(model->output_shape(), ElementsAre(8, 5, 5));
  EXPECT_EQ(forward_shape(*model, input), model->output_shape());
  auto params = model->named_parameters();
  ASSERT_TRUE(params.contains("layers.0.shortcut.0.weight"));
  EXPECT_THAT(params["layers.0.shortcut.0.weight"].sizes().vec(), ElementsAre(8, 4, 1, 1));
  EXPECT_FALSE(params.contains("layers.0.shortcut.0.bias"));
  EXPECT_TRUE(params.contains("layers.0.shortcut.1.weight")) << "the projection's batchnorm";
}

TEST(Residual, ProjectsFlatAndOneDimensionalInputs) {
  auto flat = build("layers: [{type: residual, body: [{type: linear, out: 5}]}]", {3});
  EXPECT_THAT(flat->named_parameters()["layers.0.shortcut.0.weight"].sizes().vec(),
              ElementsAre(5, 3));
  auto sequence = build(
      "layers: [{type: residual, body: [{type: conv1d, out: 6, stride: 2, padding: 1}]}]", {2, 11});
  EXPECT_THAT(sequence->output_shape(), ElementsAre(6, 6));
  EXPECT_EQ(forward_shape(*sequence, {2, 11}), sequence->output_shape());
}

TEST(Residual, UsesAGivenShortcut) {
  auto model = build(
      "layers: [{type: residual, body: [{type: linear, out: 2}], shortcut: [{type: linear, out: "
      "2, bias: false}]}]",
      {4});
  EXPECT_THAT(parameter_names(*model),
              UnorderedElementsAre("layers.0.body.0.weight", "layers.0.body.0.bias",
                                   "layers.0.shortcut.0.weight"));
}

TEST(Residual, RefusesShapesItCannotJoin) {
  auto no_projection = build_error(
      "layers: [flatten, {type: residual, projection: false, body: [{type: linear, out: 2}]}]",
      {1, 2, 2});
  EXPECT_EQ(no_projection.path(), "model.layers[1]");
  EXPECT_THAT(no_projection.what(), HasSubstr("maps [4] to [2]"));

  auto bad_shortcut = build_error(
      "layers: [{type: residual, body: [{type: linear, out: 2}], shortcut: [{type: linear, out: "
      "3}]}]",
      {4});
  EXPECT_THAT(bad_shortcut.what(), HasSubstr("the body gives [2] but the shortcut gives [3]"));

  auto across_ranks = build_error("layers: [{type: residual, body: [flatten]}]", {2, 3, 3});
  EXPECT_THAT(across_ranks.what(), HasSubstr("across ranks"));
}

TEST(Residual, AnErrorInsideTheBodyNamesTheInnerLayer) {
  auto error = build_error("layers: [relu, {type: residual, body: [relu, {type: linear, out: 2}]}]",
                           {1, 4, 4});
  EXPECT_EQ(error.path(), "model.layers[1].body[1]");
  EXPECT_THAT(error.what(), HasSubstr("[1, 4, 4]"));
}

const char* kTwoBranches =
    "layers: [{type: graph, nodes: ["
    "{name: wide, layers: [{type: conv2d, out: 3, kernel: 1}]}, "
    "{name: narrow, inputs: [input], layers: [{type: conv2d, out: 2, kernel: 1}]}, "
    "{name: joined, inputs: [wide, narrow], merge: concat}]}]";

TEST(Graph, ConcatenatesBranchesAlongChannels) {
  auto model = build(kTwoBranches, {1, 4, 4});
  EXPECT_THAT(model->output_shape(), ElementsAre(5, 4, 4));
  EXPECT_EQ(forward_shape(*model, {1, 4, 4}), model->output_shape());
  EXPECT_THAT(parameter_names(*model),
              UnorderedElementsAre("layers.0.wide.0.weight", "layers.0.wide.0.bias",
                                   "layers.0.narrow.0.weight", "layers.0.narrow.0.bias"));
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.fill_(1);
  torch::Tensor out = model->forward(torch::ones({1, 1, 4, 4}));
  EXPECT_TRUE(torch::equal(out, torch::full({1, 5, 4, 4}, 2.0f)));  // 1*1 + 1 on every channel
}

TEST(Graph, AddsBranchesAndChainsNodesByDefault) {
  auto model = build(
      "layers: [{type: graph, nodes: [{name: double, layers: [{type: linear, out: 2, bias: "
      "false}]}, {name: again, layers: [relu]}, {name: sum, inputs: [again, input], merge: "
      "add}]}]",
      {2});
  torch::NoGradGuard no_grad;
  model->named_parameters()["layers.0.double.0.weight"].copy_(torch::eye(2) * 2);
  torch::Tensor x = torch::tensor({{3.0f, -1.0f}});
  EXPECT_TRUE(torch::equal(model->forward(x), torch::tensor({{9.0f, -1.0f}})));  // relu(2x) + x
}

TEST(Graph, NamesTheOutputNode) {
  auto model = build(
      "layers: [{type: graph, output: first, nodes: [{name: first, layers: [{type: linear, out: "
      "3}]}]}]",
      {2});
  EXPECT_THAT(model->output_shape(), ElementsAre(3));
}

TEST(Graph, ReportsWiringMistakes) {
  struct Case {
    std::string nodes, expected;
  };
  const Case cases[] = {
      {"[{name: a}, {name: b, inputs: [c]}]", "\"b\" takes \"c\", not defined before it"},
      {"[{name: a}, {name: b, inputs: [inptu]}]", "did you mean \"input\""},
      {"[{name: a}, {name: a}]", "\"a\" is taken by an earlier node"},
      {"[{name: input}]", "taken by the graph's input"},
      {"[{name: a.b}]", "without dots"},
      {"[{name: a}, {name: b, inputs: [a, input]}]", "say how they combine"},
      {"[{name: a, layers: [{type: linear, out: 3}]}, {name: b, inputs: [a, input], merge: add}]",
       "cannot add [3] and [2]"},
      {"[{name: a, layers: [flatten]}, {name: b, inputs: [a], layers: [relu]}, {name: c, "
       "inputs: [input], layers: [relu]}]",
       "graph nodes a, b do not lead to the output \"c\""},
  };
  for (const auto& c : cases) {
    auto error = build_error("layers: [{type: graph, nodes: " + c.nodes + "}]", {2});
    EXPECT_EQ(error.path(), "model.layers[0]") << c.nodes;
    EXPECT_THAT(error.what(), HasSubstr(c.expected)) << c.nodes;
  }
  auto concat = build_error(
      "layers: [{type: graph, nodes: [{name: a, layers: [{type: maxpool, kernel: 2}]}, {name: b, "
      "inputs: [a, input], merge: concat}]}]",
      {1, 4, 4});
  EXPECT_THAT(concat.what(), HasSubstr("cannot concat [1, 2, 2] and [1, 4, 4]"));
  auto output = build_error("layers: [{type: graph, output: z, nodes: [{name: a}]}]", {2});
  EXPECT_THAT(output.what(), HasSubstr("graph output \"z\" is not a node"));
  EXPECT_THROW(read_spec("model",
                         "{type: sequential, layers: [{type: graph, nodes: [{name: a, "
                         "merge: multiply}]}]}"),
               ConfigError);
}

const char* kBlocks =
    "blocks: {unit: [{type: linear, out: 4}, relu], pair: [{type: block, name: unit}, "
    "{type: block, name: unit}]}, ";

TEST(Block, ExpandsANamedBlockWithItsOwnWeightsPerUse) {
  auto model = build(
      std::string(kBlocks) + "layers: [{type: block, name: unit}, {type: block, name: unit}]", {3});
  EXPECT_THAT(parameter_names(*model), ElementsAre("layers.0.0.weight", "layers.0.0.bias",
                                                   "layers.1.0.weight", "layers.1.0.bias"));
  auto params = model->named_parameters();
  EXPECT_THAT(params["layers.0.0.weight"].sizes().vec(), ElementsAre(4, 3));
  EXPECT_THAT(params["layers.1.0.weight"].sizes().vec(), ElementsAre(4, 4));
  EXPECT_FALSE(torch::equal(params["layers.0.0.bias"], params["layers.1.0.bias"]));
}

TEST(Block, RepeatsAndNestsBlocks) {
  auto model = build(std::string(kBlocks) + "layers: [{type: block, name: pair, repeat: 3}]", {4});
  EXPECT_EQ(model->parameters().size(), 12u);  // 3 copies x 2 units x (weight, bias)
  EXPECT_TRUE(model->named_parameters().contains("layers.0.2.1.0.weight"));
  EXPECT_EQ(forward_shape(*model, {4}), Shape{4});
}

TEST(Block, BlocksWorkInsideResidualBodies) {
  auto model = build(
      std::string(kBlocks) + "layers: [{type: residual, body: [{type: block, name: unit}]}]", {4});
  EXPECT_TRUE(model->named_parameters().contains("layers.0.body.0.0.weight"));
}

TEST(Block, AnUnknownOrSelfContainingBlockIsAnError) {
  auto unknown = build_error(std::string(kBlocks) + "layers: [{type: block, name: unti}]", {3});
  EXPECT_EQ(unknown.path(), "model.layers[0]");
  EXPECT_THAT(unknown.what(), HasSubstr("did you mean \"unit\""));
  auto none = build_error("layers: [{type: block, name: unit}]", {3});
  EXPECT_THAT(none.what(), HasSubstr("none are"));
  auto loop = build_error(
      "blocks: {a: [{type: block, name: b}], b: [relu, {type: block, name: a}]}, layers: "
      "[{type: block, name: a}]",
      {3});
  EXPECT_THAT(loop.what(), HasSubstr("block \"a\" contains itself (through a -> b -> a)"));
}

TEST(Block, AnErrorInABlockNamesTheLayerInItsDefinition) {
  auto error = build_error(
      "blocks: {conv: [relu, {type: conv2d, out: 2}]}, layers: [flatten, {type: block, name: "
      "conv}]",
      {1, 4, 4});
  EXPECT_EQ(error.path(), "model.blocks.conv[1]");
  EXPECT_THAT(error.what(), HasSubstr("[16]"));
}

}  // namespace composition_test
}  // namespace kiln::models
