// train.lr_scales: parameter-name patterns, groups with scaled learning rates, frozen parameters
// left out, and patterns that match nothing refused.

#include "kiln/optim/param_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace param_groups_test {

using ::testing::HasSubstr;
using Named = torch::OrderedDict<std::string, torch::Tensor>;

TEST(Patterns, StarMatchesAnyRun) {
  EXPECT_TRUE(matches_pattern("fc.weight", "fc.weight"));
  EXPECT_FALSE(matches_pattern("fc.weight", "fc.weights"));
  EXPECT_TRUE(matches_pattern("layer4.*", "layer4.1.conv2.weight"));
  EXPECT_FALSE(matches_pattern("layer4.*", "layer3.1.conv2.weight"));
  EXPECT_TRUE(matches_pattern("*.bias", "layer1.0.bn1.bias"));
  EXPECT_TRUE(matches_pattern("*", "anything"));
  EXPECT_TRUE(matches_pattern("layer*.bn*.weight", "layer2.bn1.weight"));
  EXPECT_FALSE(matches_pattern("layer*.bn*.weight", "layer2.conv1.weight"));
}

Named three_parameters() {
  Named named;
  named.insert("backbone.weight", torch::ones({2}).requires_grad_());
  named.insert("backbone.bias", torch::ones({2}).requires_grad_());
  named.insert("head.weight", torch::ones({2}).requires_grad_());
  return named;
}

ComponentSpec sgd() { return read_spec("optimizer", "{type: sgd, lr: 0.1}"); }

TEST(ParamGroups, EachGroupLearnsAtItsScaledRate) {
  Named named = three_parameters();
  auto optimizer = build_grouped_optimizer(
      sgd(), named, {{"backbone.*", 0.1}, {"backbone.bias", 0.0}}, "train.lr_scales");
  ASSERT_EQ(optimizer->param_groups().size(), 3u);
  EXPECT_DOUBLE_EQ(optimizer->param_groups()[0].options().get_lr(), 0.1) << "scale 1 first";
  for (auto& item : named) item.value().mutable_grad() = torch::ones({2});
  optimizer->step();
  EXPECT_TRUE(torch::allclose(named["head.weight"], torch::full({2}, 0.9f)));
  EXPECT_TRUE(torch::allclose(named["backbone.weight"], torch::full({2}, 0.99f)));
  EXPECT_TRUE(torch::equal(named["backbone.bias"], torch::ones({2}))) << "longest pattern wins";
}

TEST(ParamGroups, FrozenParametersAreLeftOut) {
  Named named = three_parameters();
  named["backbone.weight"].set_requires_grad(false);
  auto optimizer = build_grouped_optimizer(sgd(), named, {}, "train.lr_scales");
  ASSERT_EQ(optimizer->param_groups().size(), 1u);
  EXPECT_EQ(optimizer->param_groups()[0].params().size(), 2u);
}

TEST(ParamGroups, RefusesPatternsMatchingNothingAndAllFrozen) {
  Named named = three_parameters();
  try {
    build_grouped_optimizer(sgd(), named, {{"encoder.*", 0.5}}, "train.lr_scales");
    FAIL() << "accepted a pattern matching nothing";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.lr_scales");
    EXPECT_THAT(e.what(), HasSubstr("\"encoder.*\" matches no trainable parameter"));
  }
  for (auto& item : named) item.value().set_requires_grad(false);
  EXPECT_THROW(build_grouped_optimizer(sgd(), named, {}, "train.lr_scales"), ConfigError);
}

// No decay on biases: with zero gradients only the decay moves a weight, by lr x decay x weight.
TEST(ParamGroups, WeightDecayScalesGiveGroupsTheirOwnDecay) {
  Named named = three_parameters();
  auto optimizer =
      build_grouped_optimizer(read_spec("optimizer", "{type: sgd, lr: 0.1, weight_decay: 0.1}"),
                              named, {{"backbone.*", 0.5}}, "train.lr_scales", {{"*.bias", 0.0}});
  // (lr 1, decay 1) first, then backbone.weight (0.5, 1) and backbone.bias (0.5, 0).
  ASSERT_EQ(optimizer->param_groups().size(), 3u);
  for (auto& item : named) item.value().mutable_grad() = torch::zeros({2});
  optimizer->step();
  EXPECT_TRUE(torch::allclose(named["head.weight"], torch::full({2}, 0.99f)));
  EXPECT_TRUE(torch::allclose(named["backbone.weight"], torch::full({2}, 0.995f)));
  EXPECT_TRUE(torch::equal(named["backbone.bias"], torch::ones({2}))) << "decay 0 on biases";
  try {
    build_grouped_optimizer(sgd(), named, {}, "train.lr_scales", {{"*.gamma", 0.0}});
    FAIL() << "accepted a pattern matching nothing";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "train.weight_decay_scales");
    EXPECT_THAT(e.what(), HasSubstr("\"*.gamma\" matches no trainable parameter"));
  }
}

}  // namespace param_groups_test
}  // namespace kiln::optim
