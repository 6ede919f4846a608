// Zoo networks built from config text against the same networks in torch.nn and torchvision
// (zoo.json, written by make_zoo_golden.py): parameter and buffer names and shapes, and every
// named output in eval mode, with both sides holding the same weights from one formula.

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <map>

#include "kiln/models/model.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace zoo_golden_test {

using models::Shape;
using Shapes = std::map<std::string, Shape>;

const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {
      "mlp",
      "tfdoc_cnn",
      "lenet5",
      "lenet5_relu_maxpool",
      "vgg11_bn",
      "vgg16",
      "resnet18",
      "resnet18_small_input",
      "resnet50",
      "resnet20",
      "wide_resnet",
      "mobilenet_v2",
      "mobilenet_v2_small_input",
      "rnn_classifier_lstm",
      "rnn_classifier_gru_tokens",
      "tcn_steps_first_last",
      "tcn_sequence",
      "autoencoder_conv_1d",
      "autoencoder_conv_2d",
      "multi_head",
      "autoencoder_mlp",
  };
  return names;
}

const Json& golden_cases() {
  static const Json json = load_golden("zoo.json");
  return json.at("cases");
}

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// make_zoo_golden.py's deterministic_fill: sin(0.7 i + phase(name)) scaled by the tensor's role.
torch::Tensor deterministic_values(const std::string& name, const torch::Tensor& like) {
  double phase =
      double(crc32(0, reinterpret_cast<const Bytef*>(name.data()), name.size()) % 1000) / 100.0;
  torch::Tensor index = torch::arange(like.numel(), torch::kFloat64);
  torch::Tensor wave = torch::sin(0.7 * index + phase).reshape(like.sizes());
  torch::Tensor values;
  if (like.dim() >= 2)
    values = wave * std::sqrt(3.0 / double(like.numel() / like.size(0)));
  else if (ends_with(name, "running_var") || ends_with(name, "weight"))
    values = 1.0 + 0.2 * wave;
  else
    values = 0.1 * wave;
  return values.to(torch::kFloat32);
}

void fill_deterministically(models::Model& model) {
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters())
    item.value().copy_(deterministic_values(item.key(), item.value()));
  for (auto& item : model.named_buffers())
    if (!ends_with(item.key(), "num_batches_tracked"))
      item.value().copy_(deterministic_values(item.key(), item.value()));
}

Shapes shapes_in(const Json& shapes_by_name) { return shapes_by_name.get<Shapes>(); }

class ZooVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooVsTorch, NamesShapesAndOutputsMatch) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  auto model = models::build_model(read_spec("model", golden_case.at("config").get<std::string>()),
                                   golden_case.at("input_shape").get<Shape>());
  ASSERT_EQ(shapes_of(model->named_parameters()), shapes_in(golden_case.at("parameters")));
  ASSERT_EQ(shapes_of(model->named_buffers()), shapes_in(golden_case.at("buffers")));
  fill_deterministically(*model);

  model->eval();
  torch::NoGradGuard no_grad;
  models::NamedOutputs outputs = model->forward_named(tensor_from(golden_case.at("input")));
  std::vector<std::string> expected_names;
  for (const auto& [name, encoded] : golden_case.at("outputs").items()) {
    expected_names.push_back(name);
    torch::Tensor expected = tensor_from(encoded);
    ASSERT_TRUE(outputs.contains(name)) << name;
    // Deep stacks of the formula's weights reach large values; compare to the output's scale.
    double scale = expected.abs().max().item<double>();
    EXPECT_TRUE(all_close(outputs[name], expected, 0, 2e-5 * scale)) << name;
  }
  EXPECT_EQ(outputs.keys(), expected_names);
}

INSTANTIATE_TEST_SUITE_P(Golden, ZooVsTorch, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenZooCases, EveryGeneratedCaseIsTested) {
  EXPECT_EQ(case_names_in(golden_cases()), case_names());
}

}  // namespace zoo_golden_test
}  // namespace kiln::golden
