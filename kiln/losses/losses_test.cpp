// What the golden values cannot show: the losses' config errors name the key and the fix, and
// targets of the wrong shape or classes of the wrong count are refused naming both sides.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/losses/loss.h"
#include "tests/support/components.h"

namespace kiln::losses {
namespace losses_test {

using ::testing::HasSubstr;

std::string config_error(const std::string& config) {
  try {
    read_spec("loss", config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// The message of the kiln::Error `config` throws on `output` and `target`.
std::string forward_error(const std::string& config, const torch::Tensor& output,
                          const torch::Tensor& target) {
  auto loss = loss_registry().create(read_spec("loss", config));
  try {
    loss->forward(output, target);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Losses, RefuseMalformedOptions) {
  EXPECT_THAT(config_error("huberr"),
              HasSubstr("unknown loss \"huberr\"; did you mean \"huber\"?"));
  EXPECT_THAT(config_error("{type: cross_entropy, label_smoothing: 1.5}"),
              HasSubstr("config error at loss.label_smoothing: expected number in [0, 1]"));
  EXPECT_THAT(config_error("{type: cross_entropy, label_smoothing: lots}"),
              HasSubstr("config error at loss.label_smoothing"));
  EXPECT_THAT(config_error("{type: cross_entropy, class_weights: [1, -2]}"),
              HasSubstr("config error at loss.class_weights: expected list of number with every "
                        "item >= 0"));
  EXPECT_THAT(config_error("{type: cross_entropy, class_weights: [0, 0]}"),
              HasSubstr("config error at loss.class_weights: expected list of number with a "
                        "positive sum"));
  EXPECT_THAT(config_error("{type: cross_entropy, class_weights: {a: 1}}"),
              HasSubstr("config error at loss.class_weights"));
  EXPECT_THAT(config_error("{type: binary_cross_entropy, pos_weight: [1, 0]}"),
              HasSubstr("config error at loss.pos_weight: expected list of number with every "
                        "item > 0"));
  EXPECT_THAT(config_error("{type: huber, delta: 0}"),
              HasSubstr("config error at loss.delta: expected number > 0"));
  EXPECT_THAT(config_error("{type: huber, delta: [1]}"), HasSubstr("config error at loss.delta"));
  EXPECT_THAT(config_error("{type: mae, delta: 1}"), HasSubstr("config error at loss.delta: "
                                                               "unknown key"));
}

TEST(Losses, ClassWeightsMustCountTheClasses) {
  EXPECT_THAT(forward_error("{type: cross_entropy, class_weights: [1, 2, 3]}", torch::zeros({2, 5}),
                            torch::tensor({0, 4}, torch::kInt64)),
              HasSubstr("class_weights has 3 weights but the logits have 5 classes"));
  EXPECT_EQ(forward_error("{type: cross_entropy, class_weights: [1, 2, 3, 4, 5]}",
                          torch::zeros({2, 5}), torch::tensor({0, 4}, torch::kInt64)),
            "no error");
}

TEST(Losses, PosWeightMustCountTheColumns) {
  EXPECT_THAT(forward_error("{type: binary_cross_entropy, pos_weight: [1, 2]}",
                            torch::zeros({2, 3}), torch::zeros({2, 3})),
              HasSubstr("pos_weight has 2 values but the outputs have 3 columns"));
}

TEST(Losses, ElementwiseLossesNameBothShapes) {
  for (const char* name : {"mse", "mae", "huber", "binary_cross_entropy"}) {
    EXPECT_THAT(forward_error(name, torch::zeros({4, 3}), torch::zeros({4})),
                HasSubstr(std::string(name) + " expects outputs and targets of the same shape, "
                                              "got outputs [4, 3] and targets [4]"));
    // class indices where multi-hot targets are due: the same refusal, not a broadcast
    EXPECT_THAT(forward_error(name, torch::zeros({4, 3}), torch::zeros({4, 1})),
                HasSubstr("got outputs [4, 3] and targets [4, 1]"));
    // a [batch] target fits a one-column output
    EXPECT_EQ(forward_error(name, torch::zeros({4, 1}), torch::zeros({4})), "no error") << name;
  }
}

TEST(Losses, BinaryCrossEntropyTakesIntegerTargetsAndStaysFiniteOnHugeLogits) {
  auto loss = loss_registry().create(read_spec("loss", "binary_cross_entropy"));
  torch::Tensor logits = torch::tensor({{200.0f, -200.0f}});
  torch::Tensor value = loss->forward(logits, torch::tensor({{1, 0}}));
  EXPECT_NEAR(value.item<double>(), 0.0, 1e-6);
  value = loss->forward(logits, torch::tensor({{0, 1}}));
  EXPECT_NEAR(value.item<double>(), 200.0, 1e-3) << "log-sum-exp form: no inf";
}

}  // namespace losses_test
}  // namespace kiln::losses
