// cross_entropy and accuracy against the values PyTorch computes for the same batches
// (losses_metrics.json, written by make_golden.py).

#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/losses/loss.h"
#include "kiln/metrics/metric.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace losses_metrics_golden_test {

const Json& golden() {
  static const Json json = load_golden("losses_metrics.json");
  return json;
}

torch::Tensor class_indices(const Json& targets) {
  return torch::tensor(targets.get<std::vector<int64_t>>(), torch::kInt64);
}

TEST(GoldenCrossEntropy, LossAndItsGradientMatchPyTorch) {
  const Json& golden_case = golden().at("cross_entropy");
  auto loss = losses::loss_registry().create(
      read_spec("loss", golden_case.at("config").get<std::string>()));
  // One row's logits are far beyond exp()'s float32 range, so only a log-sum-exp form passes.
  torch::Tensor logits = tensor_from(golden_case.at("logits")).requires_grad_();
  torch::Tensor value = loss->forward(logits, class_indices(golden_case.at("targets")));
  value.backward();
  EXPECT_EQ(value.dim(), 0) << "the loss is the batch mean, a scalar";
  EXPECT_TRUE(all_close(value, torch::tensor(golden_case.at("loss").get<double>())));
  EXPECT_TRUE(all_close(logits.grad(), tensor_from(golden_case.at("grad"))));
}

TEST(GoldenMse, LossAndItsGradientMatchPyTorch) {
  const Json& golden_case = golden().at("mse");
  auto loss = losses::loss_registry().create(
      read_spec("loss", golden_case.at("config").get<std::string>()));
  torch::Tensor output = tensor_from(golden_case.at("output")).requires_grad_();
  torch::Tensor value = loss->forward(output, tensor_from(golden_case.at("target")));
  value.backward();
  EXPECT_EQ(value.dim(), 0) << "the loss is the mean over batch and elements, a scalar";
  EXPECT_TRUE(all_close(value, torch::tensor(golden_case.at("loss").get<double>())));
  EXPECT_TRUE(all_close(output.grad(), tensor_from(golden_case.at("grad"))));
}

TEST(Mse, RefusesShapesThatOnlyBroadcastAndNamesBoth) {
  auto loss = losses::loss_registry().create(read_spec("loss", "mse"));
  try {
    loss->forward(torch::zeros({4, 2}), torch::zeros({4}));
    FAIL() << "[4, 2] against [4] broadcasts in torch; kiln refuses it";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("outputs [4, 2] and targets [4]"), std::string::npos)
        << e.what();
  }
  // A [batch] target fits a one-column output, the shape a regression dataset gives.
  torch::Tensor value = loss->forward(torch::ones({3, 1}), torch::zeros({3}));
  EXPECT_FLOAT_EQ(value.item<float>(), 1.0f);
}

const std::vector<std::string>& loss_case_names() {
  static const std::vector<std::string> names = {
      "cross_entropy_label_smoothing",
      "cross_entropy_class_weights",
      "cross_entropy_smoothing_and_weights",
      "binary_cross_entropy_plain",
      "binary_cross_entropy_pos_weight",
      "binary_cross_entropy_one_pos_weight",
      "mae",
      "huber_default",
      "huber_delta",
  };
  return names;
}

class LossVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(LossVsTorch, ValueAndGradient) {
  const Json& golden_case = find_case(golden().at("losses"), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  auto loss = losses::loss_registry().create(
      read_spec("loss", golden_case.at("config").get<std::string>()));
  const Json& target = golden_case.at("target");
  torch::Tensor output = tensor_from(golden_case.at("output")).requires_grad_();
  torch::Tensor value =
      loss->forward(output, target.is_array() ? class_indices(target) : tensor_from(target));
  value.backward();
  EXPECT_EQ(value.dim(), 0);
  EXPECT_TRUE(all_close(value, torch::tensor(golden_case.at("loss").get<double>())));
  EXPECT_TRUE(all_close(output.grad(), tensor_from(golden_case.at("grad"))));
}

INSTANTIATE_TEST_SUITE_P(Golden, LossVsTorch, ::testing::ValuesIn(loss_case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenLossCases, EveryGeneratedCaseIsTestedAndEveryLossHasOne) {
  EXPECT_EQ(case_names_in(golden().at("losses")), loss_case_names());
  for (const std::string& name : losses::loss_registry().names()) {
    bool found = golden().contains(name);  // cross_entropy and mse have their own cases
    for (const std::string& c : loss_case_names()) found = found || c.rfind(name, 0) == 0;
    EXPECT_TRUE(found) << name << " has no golden case in make_golden.py";
  }
}

// Each case feeds two batches to one metric, as an evaluation loop does, so the value is over
// both and not the last batch's.
TEST(GoldenAccuracy, TwoUpdatesMatchPyTorch) {
  ASSERT_EQ(golden().at("accuracy").size(), 2u);
  for (const Json& golden_case : golden().at("accuracy")) {
    SCOPED_TRACE(golden_case.at("name").get<std::string>());
    auto metric = metrics::metric_registry().create(
        read_spec("metric", golden_case.at("config").get<std::string>()));
    metric->reset();
    ASSERT_EQ(golden_case.at("batches").size(), 2u);
    for (const Json& batch : golden_case.at("batches"))
      metric->update(tensor_from(batch.at("logits")), class_indices(batch.at("targets")));
    std::vector<double> expected_sums = {golden_case.at("correct").get<double>(),
                                         golden_case.at("total").get<double>()};
    EXPECT_EQ(metric->sums(), expected_sums);
    EXPECT_DOUBLE_EQ(metric->value(), golden_case.at("value").get<double>());
  }
}

}  // namespace losses_metrics_golden_test
}  // namespace kiln::golden
