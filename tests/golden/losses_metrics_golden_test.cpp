// cross_entropy, accuracy and the regularizers against the values PyTorch computes for the same
// batches and parameters (losses_metrics.json, written by make_golden.py).

#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/engine/regularization.h"
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

std::vector<std::string> regularization_case_names() {
  return {"l2_matrices", "l1_one_layer_with_vectors", "l2_and_l1"};
}

class RegularizationVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(RegularizationVsTorch, PenaltyAndGradient) {
  const Json& golden_case = find_case(golden().at("regularization"), GetParam());
  std::vector<engine::RegularizerEntry> entries;
  for (const Json& text : golden_case.at("entries"))
    entries.push_back({losses::regularizer_registry().create(
                           read_spec("regularizer", text.get<std::string>(), "regularization")),
                       "regularization"});
  torch::OrderedDict<std::string, torch::Tensor> parameters;
  for (const auto& [name, encoded] : golden_case.at("parameters").items())
    parameters.insert(name, tensor_from(encoded).requires_grad_());
  torch::Tensor penalty = engine::Regularization(std::move(entries), parameters).penalty();
  penalty.backward();
  EXPECT_TRUE(all_close(penalty, torch::tensor(golden_case.at("penalty").get<double>())));
  for (const auto& item : parameters) {
    SCOPED_TRACE(item.key());
    torch::Tensor grad = item.value().grad();
    EXPECT_TRUE(all_close(grad.defined() ? grad : torch::zeros_like(item.value()),
                          tensor_from(golden_case.at("grads").at(item.key()))));
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, RegularizationVsTorch,
                         ::testing::ValuesIn(regularization_case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenRegularizationCases, EveryGeneratedCaseIsTestedAndEveryRegularizerHasOne) {
  EXPECT_EQ(case_names_in(golden().at("regularization")), regularization_case_names());
  for (const std::string& name : losses::regularizer_registry().names()) {
    bool found = false;
    for (const Json& golden_case : golden().at("regularization"))
      for (const Json& text : golden_case.at("entries"))
        found = found || text.get<std::string>().find("type: " + name + ",") != std::string::npos;
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
