// train.freeze: frozen parameters stop requiring gradients, frozen modules stay in eval mode
// (batchnorm statistics kept), unfreeze undoes it, and an unknown path names the nearest one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/models.h"

namespace kiln::models {
namespace freeze_test {

using ::testing::HasSubstr;

std::shared_ptr<Model> conv_bn_linear() {
  return testing::build_sequential(
      "layers: [{type: conv2d, out: 2, kernel: 3}, batchnorm, relu, flatten, {type: linear, out: "
      "3}]",
      {1, 4, 4});
}

TEST(Freeze, FrozenModulesStopLearningAndKeepTheirStatistics) {
  auto model = conv_bn_linear();
  freeze(*model, {"layers.0", "layers.1"}, "train.freeze");
  auto params = model->named_parameters();
  EXPECT_FALSE(params["layers.0.weight"].requires_grad());
  EXPECT_FALSE(params["layers.1.bias"].requires_grad());
  EXPECT_TRUE(params["layers.4.weight"].requires_grad());

  model->train();
  EXPECT_TRUE(model->is_training());
  EXPECT_FALSE(model->named_modules()["layers.1"]->is_training()) << "frozen batchnorm trains";
  EXPECT_TRUE(model->named_modules()["layers.4"]->is_training());
  torch::Tensor mean_before = model->named_buffers()["layers.1.running_mean"].clone();
  model->forward(torch::randn({8, 1, 4, 4}) * 5 + 3).sum().backward();
  EXPECT_TRUE(torch::equal(model->named_buffers()["layers.1.running_mean"], mean_before));
  EXPECT_FALSE(params["layers.0.weight"].grad().defined());
  EXPECT_TRUE(params["layers.4.weight"].grad().defined());
}

TEST(Freeze, ASingleParameterCanBeFrozen) {
  auto model = conv_bn_linear();
  freeze(*model, {"layers.4.bias"}, "train.freeze");
  EXPECT_FALSE(model->named_parameters()["layers.4.bias"].requires_grad());
  EXPECT_TRUE(model->named_parameters()["layers.4.weight"].requires_grad());
  model->train();
  EXPECT_TRUE(model->named_modules()["layers.4"]->is_training());
}

// A later train cycle unfreezes everything, then freezes what its own config lists.
TEST(Freeze, UnfreezeLetsEveryParameterAndModuleTrainAgain) {
  auto model = conv_bn_linear();
  freeze(*model, {"layers.0", "layers.1"}, "train.freeze");
  unfreeze(*model);
  for (const auto& parameter : model->named_parameters())
    EXPECT_TRUE(parameter.value().requires_grad()) << parameter.key();
  model->train();
  EXPECT_TRUE(model->named_modules()["layers.1"]->is_training()) << "batchnorm still held";
  freeze(*model, {"layers.4"}, "stages[1].train.freeze");
  EXPECT_FALSE(model->named_parameters()["layers.4.weight"].requires_grad());
  EXPECT_TRUE(model->named_parameters()["layers.0.weight"].requires_grad());
}

TEST(Freeze, AnUnknownPathNamesTheNearestAndTheTopLevelModules) {
  auto model = build_model(read_spec("model", "{type: resnet, depth: 20}"), {3, 8, 8});
  try {
    freeze(*model, {"conv1", "layr1"}, "train.freeze");
    FAIL() << "froze an unknown path";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.freeze[1]");
    EXPECT_THAT(e.what(), HasSubstr("no module or parameter \"layr1\""));
    EXPECT_THAT(e.what(), HasSubstr("did you mean \"layer1\"?"));
    EXPECT_THAT(e.what(), HasSubstr("top-level modules: conv1, bn1, layer1, layer2, layer3, fc"));
  }
}

}  // namespace freeze_test
}  // namespace kiln::models
