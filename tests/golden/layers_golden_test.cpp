// Sequential models built from config text against the same layers built with torch.nn: the
// parameter and buffer names and shapes, the forward output in train or eval mode, and the
// batchnorm running statistics a train-mode forward leaves (layers.json, written by
// make_golden.py).

#include <gtest/gtest.h>

#include <map>

#include "kiln/models/model.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace layers_golden_test {

using models::Shape;
using Shapes = std::map<std::string, Shape>;
using TensorDict = torch::OrderedDict<std::string, torch::Tensor>;

// The cases make_golden.py writes, named here so each is its own test.
const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {
      "linear",
      "linear_no_bias",
      "conv2d_same",
      "conv2d_same_dilated",
      "conv2d_valid",
      "conv2d_stride2_valid",
      "conv2d_stride2_padded",
      "batchnorm2d_train",
      "batchnorm2d_eval",
      "batchnorm1d_train",
      "maxpool2d",
      "maxpool2d_stride_padding",
      "maxpool1d",
      "stack_eval",
      "stack_train",
      "leaky_relu",
      "elu",
      "gelu",
      "gelu_tanh",
      "silu",
      "tanh",
      "sigmoid",
      "softmax_last",
      "softmax_dim0",
      "identity",
      "avgpool2d",
      "avgpool1d",
      "global_avgpool",
      "layernorm_two_dims",
      "layernorm_last",
      "groupnorm",
      "reshape",
      "conv1d_same",
      "conv1d_dilated_stride",
      "upsample_nearest",
      "upsample_bilinear",
      "upsample_linear_1d",
      "conv_transpose2d",
      "depthwise_separable_conv2d",
      "residual_identity",
      "residual_projection",
      "residual_linear_projection",
      "graph_branches",
      "block_repeated",
      "embedding",
      "lstm_last",
      "lstm_bidirectional_two_layers",
      "gru_sequence",
      "gru_bidirectional_sequence_then_linear",
      "multihead_attention",
      "multihead_attention_causal_no_bias",
      "transformer_encoder",
      "transformer_encoder_pre_norm_gelu",
      "token_classifier",
  };
  return names;
}

const Json& golden_cases() {
  static const Json json = load_golden("layers.json");
  return json.at("cases");
}

Shapes shapes_in(const Json& encoded_tensors) {
  Shapes shapes;
  for (const auto& [name, encoded] : encoded_tensors.items())
    shapes[name] = encoded.at("shape").get<Shape>();
  return shapes;
}

// Copies PyTorch's values into kiln's tensors of the same names (copy_ converts float to the
// int64 of num_batches_tracked).
void load_values(TensorDict tensors, const Json& encoded_tensors) {
  torch::NoGradGuard no_grad;
  for (const auto& [name, encoded] : encoded_tensors.items())
    tensors[name].copy_(tensor_from(encoded));
}

class LayersVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(LayersVsTorch, NamesShapesAndForwardMatch) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  auto model = models::build_model(read_spec("model", golden_case.at("config").get<std::string>()),
                                   golden_case.at("input_shape").get<Shape>());
  ASSERT_EQ(shapes_of(model->named_parameters()), shapes_in(golden_case.at("parameters")));
  ASSERT_EQ(shapes_of(model->named_buffers()), shapes_in(golden_case.at("buffers")));
  load_values(model->named_parameters(), golden_case.at("parameters"));
  load_values(model->named_buffers(), golden_case.at("buffers"));

  model->train(golden_case.at("mode") == "train");
  torch::NoGradGuard no_grad;
  torch::Tensor output = model->forward(tensor_from(golden_case.at("input")));
  torch::Tensor expected = tensor_from(golden_case.at("output"));
  EXPECT_TRUE(all_close(output, expected));
  EXPECT_EQ(model->output_shape(), expected.sizes().slice(1).vec()) << "inferred output shape";
  if (!golden_case.contains("buffers_after")) return;
  TensorDict buffers = model->named_buffers();
  for (const auto& [name, encoded] : golden_case.at("buffers_after").items())
    EXPECT_TRUE(all_close(buffers[name], tensor_from(encoded))) << name << " after the forward";
}

INSTANTIATE_TEST_SUITE_P(Golden, LayersVsTorch, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenLayerCases, EveryGeneratedCaseIsTested) {
  EXPECT_EQ(case_names_in(golden_cases()), case_names());
}

}  // namespace layers_golden_test
}  // namespace kiln::golden
