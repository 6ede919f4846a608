// How metrics are tagged: a metric whose options change what it measures says so in its tag
// (top_5_accuracy, f1_micro), so the same metric twice keeps two tags; a metric of several values
// (confusion_matrix) gets a tag per value; two metrics that would share a tag are refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/objective.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace objective_tags_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<NamedMetric> metrics_of(const std::vector<std::string>& configs) {
  std::vector<NamedMetric> out;
  for (const auto& config : configs) {
    ComponentSpec spec = read_spec("metric", config);
    out.push_back({spec.type(), metrics::metric_registry().create(spec)});
  }
  return out;
}

Objective classifier_objective(const std::vector<std::string>& configs) {
  return Objective(test_rig::single_head(
      losses::loss_registry().create(read_spec("loss", "cross_entropy")), metrics_of(configs)));
}

TEST(ObjectiveTags, OptionsThatChangeTheMeasureNameTheTag) {
  Objective objective =
      classifier_objective({"accuracy", "{type: top_k_accuracy, k: 2}",
                            "{type: top_k_accuracy, k: 3}", "f1", "{type: f1, average: micro}"});
  EXPECT_THAT(objective.tags("val"), ElementsAre("val/loss", "val/accuracy", "val/top_2_accuracy",
                                                 "val/top_3_accuracy", "val/f1", "val/f1_micro"));
}

TEST(ObjectiveTags, AConfusionMatrixReportsACountPerCell) {
  auto model = models::build_model(
      read_spec("model", "{type: sequential, layers: [{type: linear, out: 2}]}"), {3});
  Objective objective = classifier_objective({"accuracy", "confusion_matrix"});
  data::Batch batch{torch::randn({6, 3}), torch::tensor({0, 1, 1, 0, 1, 1}, torch::kInt64), {}, {}};
  torch::NoGradGuard no_grad;
  objective.compute(*model, batch);
  MetricValues values = objective.values("val");
  torch::Tensor predicted = model->forward(batch.input).argmax(1);
  double cell_1_0 = (batch.target.eq(1) & predicted.eq(0)).sum().item<double>();
  EXPECT_EQ(values.at("val/confusion_matrix/true_1/pred_0"), cell_1_0);
  double total = 0;
  for (const char* cell : {"true_0/pred_0", "true_0/pred_1", "true_1/pred_0", "true_1/pred_1"})
    total += values.at(std::string("val/confusion_matrix/") + cell);
  EXPECT_EQ(total, 6);
  EXPECT_EQ(values.count("val/confusion_matrix"), 0u) << "not one number: no tag of its own";
  EXPECT_EQ(values.count("val/accuracy"), 1u);
  EXPECT_THAT(
      objective.tags("val"),
      ElementsAre("val/loss", "val/accuracy", "val/confusion_matrix/true_0/pred_0",
                  "val/confusion_matrix/true_0/pred_1", "val/confusion_matrix/true_1/pred_0",
                  "val/confusion_matrix/true_1/pred_1"));
}

TEST(ObjectiveTags, TwoMetricsWithOneTagAreRefused) {
  try {
    classifier_objective({"{type: top_k_accuracy, k: 2}", "f1", "{type: top_k_accuracy, k: 2}"});
    FAIL() << "two metrics reported as val/top_2_accuracy";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "metrics");
    EXPECT_THAT(e.what(), HasSubstr("\"top_k_accuracy\" and \"top_k_accuracy\" would both be "
                                    "reported as top_2_accuracy"));
  }
}

TEST(ObjectiveTags, AHeadsClashIsReportedAtItsMetrics) {
  std::vector<Objective::Head> heads;
  heads.push_back({"labels", losses::loss_registry().create(read_spec("loss", "cross_entropy")),
                   1.0, metrics_of({"f1", "f1"}), "target", "model.heads[1]"});
  try {
    Objective objective(std::move(heads));
    FAIL() << "f1 twice in one head";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.heads[1].metrics");
  }
}

}  // namespace objective_tags_test
}  // namespace kiln::engine
