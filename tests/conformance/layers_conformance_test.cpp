// Every registered layer builds from an example config, runs forward on a batch giving the shape
// it inferred, and passes gradients back to each of its parameters and to its input. A layer
// registered without an example here fails EveryLayerHasAnExample, so none escapes these checks.

#include <gtest/gtest.h>

#include <map>

#include "kiln/models/layer.h"
#include "kiln/models/model.h"
#include "tests/conformance/conformance.h"
#include "tests/support/components.h"

namespace kiln::models {
namespace layers_conformance_test {

struct LayerExample {
  std::string config;  // the layer as written in `layers:`
  Shape input;
  int64_t index_limit = 0;  // > 0: inputs are integer indices below it
};

const std::map<std::string, LayerExample>& examples() {
  static const std::map<std::string, LayerExample> table = {
      {"avgpool", {"{type: avgpool, kernel: 2}", {2, 6, 6}}},
      {"batchnorm", {"batchnorm", {3, 4, 4}}},
      {"block", {"{type: block, name: twice, repeat: 2}", {4}}},
      {"conv1d", {"{type: conv1d, out: 3, kernel: 3}", {2, 9}}},
      {"conv2d", {"{type: conv2d, out: 4, kernel: 3, groups: 2}", {2, 6, 6}}},
      {"conv_transpose2d", {"{type: conv_transpose2d, out: 2, kernel: 2, stride: 2}", {3, 4, 4}}},
      {"depthwise_separable_conv2d", {"{type: depthwise_separable_conv2d, out: 4}", {2, 5, 5}}},
      {"dropout", {"{type: dropout, p: 0.3}", {5}}},
      {"elu", {"elu", {5}}},
      {"embedding", {"{type: embedding, entries: 10, dim: 4}", {6}, 10}},
      {"flatten", {"flatten", {2, 3, 3}}},
      {"gelu", {"gelu", {5}}},
      {"global_avgpool", {"global_avgpool", {3, 4, 4}}},
      {"graph",
       {"{type: graph, nodes: [{name: a, layers: [{type: linear, out: 3}]}, "
        "{name: b, inputs: [input, a], merge: concat}]}",
        {4}}},
      {"groupnorm", {"{type: groupnorm, groups: 2}", {4, 3, 3}}},
      {"gru", {"{type: gru, hidden: 3, layers: 2, bidirectional: true}", {5, 2}}},
      {"identity", {"identity", {5}}},
      {"layernorm", {"layernorm", {3, 5}}},
      {"leaky_relu", {"leaky_relu", {5}}},
      {"linear", {"{type: linear, out: 3}", {5}}},
      {"lstm", {"{type: lstm, hidden: 3, output: sequence}", {5, 2}}},
      {"maxpool", {"maxpool", {2, 6, 6}}},
      {"multihead_attention", {"{type: multihead_attention, heads: 2, causal: true}", {5, 4}}},
      {"relu", {"relu", {5}}},
      {"reshape", {"{type: reshape, shape: [2, -1]}", {6}}},
      {"residual",
       {"{type: residual, body: [{type: conv2d, out: 4, stride: 2, padding: 1}]}", {2, 6, 6}}},
      {"sigmoid", {"sigmoid", {5}}},
      {"silu", {"silu", {5}}},
      {"softmax", {"softmax", {5}}},
      {"tanh", {"tanh", {5}}},
      {"transformer_encoder", {"{type: transformer_encoder, heads: 2, layers: 2}", {5, 4}}},
      {"upsample", {"upsample", {2, 3, 3}}},
  };
  return table;
}

// A layer list with a parameter, for the block example and for gradients to reach something.
const char* kBlocks = "blocks: {twice: [{type: linear, out: 4}, relu]}";

TEST(LayerConformance, EveryLayerHasAnExample) {
  for (const auto& name : layer_registry().names())
    EXPECT_TRUE(examples().count(name)) << "layer \"" << name << "\" has no example here";
}

class LayerExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(LayerExamples, BuildsRunsAndPassesGradients) {
  const LayerExample& example = examples().at(GetParam());
  std::string config =
      "{type: sequential, " + std::string(kBlocks) + ", layers: [" + example.config + "]}";
  torch::manual_seed(1);  // the same weights and inputs every run: no dead-relu flakes
  SCOPED_TRACE(config);
  auto model = build_model(read_spec("model", config), example.input);

  Shape batch = example.input;
  batch.insert(batch.begin(), 3);
  torch::Tensor input = example.index_limit > 0
                            ? torch::randint(example.index_limit, batch).to(torch::kFloat)
                            : torch::randn(batch).requires_grad_();
  model->train();
  torch::Tensor output = model->forward(input);
  Shape expected = model->output_shape();
  expected.insert(expected.begin(), 3);
  EXPECT_EQ(output.sizes().vec(), expected) << "forward disagrees with the inferred shape";

  output.pow(2).sum().backward();
  if (input.requires_grad()) {
    ASSERT_TRUE(input.grad().defined()) << "no gradient reaches the input";
    EXPECT_GT(input.grad().abs().sum().item<double>(), 0) << "a zero gradient reaches the input";
  }
  conformance::expect_gradients_reach_every_parameter(*model);
}

INSTANTIATE_TEST_SUITE_P(Conformance, LayerExamples,
                         ::testing::ValuesIn(conformance::names_of(examples())),
                         [](const auto& info) { return info.param; });

}  // namespace layers_conformance_test
}  // namespace kiln::models
