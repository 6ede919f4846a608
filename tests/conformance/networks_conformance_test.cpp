// Every registered network builds from an example config, runs forward giving the shape it
// inferred and its named outputs (the main one first), and passes gradients back to each of its
// parameters. The networks torchvision also has hold exactly torchvision's parameter counts.

#include <gtest/gtest.h>

#include <map>

#include "kiln/models/model.h"
#include "tests/conformance/conformance.h"
#include "tests/support/components.h"

namespace kiln::models {
namespace networks_conformance_test {

struct NetworkExample {
  std::string config;
  Inputs input;
  std::vector<std::string> outputs;  // names, main first
};

// A tabular row of six: wide = [number, number, index of 4], deep = [number, number, index of 5
// embedded in 2].
InputLayout wide_and_deep() {
  return {{{"wide", 0, 3}, {"deep", 3, 3}}, {{"a", 2, 4, 0}, {"b", 5, 5, 2}}};
}

const std::map<std::string, NetworkExample>& examples() {
  static const std::map<std::string, NetworkExample> table = {
      {"autoencoder",
       {"{type: autoencoder, kind: conv, channels: [4, 8], code: 5}",
        {1, 16},
        {"reconstruction", "embedding"}}},
      {"dnn",
       {"{type: dnn, num_classes: 3, input: deep, hidden: [4]}",
        {{6}, wide_and_deep()},
        {"logits"}}},
      {"lenet5", {"lenet5", {1, 28, 28}, {"logits"}}},
      {"linear", {"{type: linear, num_classes: 3}", {{6}, wide_and_deep()}, {"logits"}}},
      {"mlp", {"{type: mlp, num_classes: 3, hidden: [8], batchnorm: true}", {2, 3}, {"logits"}}},
      {"mobilenet_v2",
       {"{type: mobilenet_v2, width: 0.25, small_input: true}", {1, 28, 28}, {"logits"}}},
      {"resnet", {"{type: resnet, depth: 20, num_classes: 4}", {3, 16, 16}, {"logits"}}},
      {"multi_head",
       {"{type: multi_head, backbone: [flatten, {type: linear, out: 8}, relu], heads: [{name: "
        "class, layers: [{type: linear, out: 3}], loss: cross_entropy}, {name: echo, layers: "
        "[{type: linear, out: 6}, {type: reshape, shape: [2, 3]}], loss: mse, target: input}]}",
        {2, 3},
        {"class", "echo"}}},
      {"rnn_classifier",
       {"{type: rnn_classifier, num_classes: 3, cell: gru, hidden: 5, vocabulary: 20}",
        {7},
        {"logits"}}},
      {"sequential",
       {"{type: sequential, layers: [flatten, {type: linear, out: 2}]}", {3, 2}, {"output"}}},
      {"tcn",
       {"{type: tcn, num_classes: 2, channels: [8, 8], layout: steps_first}", {12, 3}, {"output"}}},
      {"tfdoc_cnn", {"{type: tfdoc_cnn, channels: [4, 8], dense: 16}", {1, 28, 28}, {"logits"}}},
      {"vgg",
       {"{type: vgg, depth: 11, batchnorm: true, hidden: 32, pool: 1}", {3, 32, 32}, {"logits"}}},
      {"wide_deep",
       {"{type: wide_deep, num_classes: 2, hidden: [4, 3]}", {{6}, wide_and_deep()}, {"logits"}}},
      {"torchscript",
       {std::string("{type: torchscript, output: logits, file: ") + KILN_GOLDEN_DIR +
            "/custom_step/step.pt}",
        {4},
        {"logits"}}},
      {"wide_resnet",
       {"{type: wide_resnet, depth: 10, widen: 1, dropout: 0.3}", {3, 8, 8}, {"logits"}}},
  };
  return table;
}

TEST(NetworkConformance, EveryNetworkHasAnExample) {
  for (const auto& name : model_registry().names())
    EXPECT_TRUE(examples().count(name)) << "network \"" << name << "\" has no example here";
}

class NetworkExamples : public ::testing::TestWithParam<std::string> {};

TEST_P(NetworkExamples, BuildsRunsAndPassesGradients) {
  const NetworkExample& example = examples().at(GetParam());
  torch::manual_seed(1);  // the same weights and inputs every run: no dead-relu flakes
  SCOPED_TRACE(example.config);
  auto model = build_model(read_spec("model", example.config), example.input);
  Shape batch = example.input.shape;
  batch.insert(batch.begin(), 2);
  torch::Tensor input = GetParam() == "rnn_classifier" ? torch::randint(20, batch).to(torch::kFloat)
                                                       : torch::rand(batch);
  model->train();
  NamedOutputs outputs = model->forward_named(input);
  EXPECT_EQ(outputs.keys(), example.outputs);
  EXPECT_EQ(model->output_name(), example.outputs.front());
  torch::Tensor output = outputs[model->output_name()];
  Shape expected = model->output_shape();
  expected.insert(expected.begin(), 2);
  EXPECT_EQ(output.sizes().vec(), expected) << "forward disagrees with the inferred shape";

  // Through every output, so that each head of a multi_head model gets its gradients.
  torch::Tensor loss = torch::zeros({});
  for (const auto& named : outputs) loss = loss + named.value().pow(2).sum();
  loss.backward();
  conformance::expect_gradients_reach_every_parameter(*model);
}

INSTANTIATE_TEST_SUITE_P(Conformance, NetworkExamples,
                         ::testing::ValuesIn(conformance::names_of(examples())),
                         [](const auto& info) { return info.param; });

int64_t parameter_count(const std::string& config, const Shape& input) {
  auto model = build_model(read_spec("model", config), input);
  int64_t count = 0;
  for (const auto& parameter : model->parameters()) count += parameter.numel();
  return count;
}

TEST(NetworkConformance, ParameterCountsEqualTorchvisions) {
  Shape imagenet{3, 224, 224};
  EXPECT_EQ(parameter_count("{type: resnet, depth: 18, num_classes: 1000}", imagenet), 11689512);
  EXPECT_EQ(parameter_count("{type: resnet, depth: 50, num_classes: 1000}", imagenet), 25557032);
  EXPECT_EQ(parameter_count("{type: vgg, depth: 16, num_classes: 1000}", imagenet), 138357544);
  EXPECT_EQ(parameter_count("{type: mobilenet_v2, num_classes: 1000}", imagenet), 3504872);
}

}  // namespace networks_conformance_test
}  // namespace kiln::models
