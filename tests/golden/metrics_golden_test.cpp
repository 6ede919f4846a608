// Every metric against scikit-learn (losses_metrics.json, written by make_golden.py): the value
// over two batches fed one after the other, the tag it reports under, and the same value from two
// instances that each saw one batch and were merged (as halves of a set, or ranks, combine).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kiln/metrics/metric.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace metrics_golden_test {

const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {
      "precision_macro_multiclass",
      "precision_micro_multiclass",
      "recall_macro_multiclass",
      "recall_micro_multiclass",
      "f1_macro_multiclass",
      "f1_micro_multiclass",
      "top_k_accuracy_2_with_ties",
      "top_k_accuracy_3_with_ties",
      "confusion_matrix_five_classes",
      "precision_macro_multilabel_threshold_05",
      "precision_micro_multilabel_threshold_05",
      "recall_macro_multilabel_threshold_05",
      "recall_micro_multilabel_threshold_05",
      "f1_macro_multilabel_threshold_05",
      "f1_micro_multilabel_threshold_05",
      "precision_macro_multilabel_threshold_03",
      "precision_micro_multilabel_threshold_03",
      "recall_macro_multilabel_threshold_03",
      "recall_micro_multilabel_threshold_03",
      "f1_macro_multilabel_threshold_03",
      "f1_micro_multilabel_threshold_03",
      "roc_auc_one_logit_with_ties",
      "roc_auc_two_classes",
      "mse_three_outputs",
      "mae_three_outputs",
      "rmse_three_outputs",
      "r2_three_outputs",
      "r2_far_from_zero",
  };
  return names;
}

const Json& golden_cases() {
  static const Json json = load_golden("losses_metrics.json");
  return json.at("metrics");
}

torch::Tensor target_from(const Json& target) {
  if (target.is_array()) return torch::tensor(target.get<std::vector<int64_t>>(), torch::kInt64);
  return tensor_from(target);
}

// A metric of the case's config that has seen batches [first, last).
std::unique_ptr<metrics::Metric> fed(const Json& golden_case, size_t first, size_t last) {
  auto metric = metrics::metric_registry().create(
      read_spec("metric", golden_case.at("config").get<std::string>()));
  metric->reset();
  const Json& batches = golden_case.at("batches");
  for (size_t i = first; i < last; ++i)
    metric->update(tensor_from(batches[i].at("output")), target_from(batches[i].at("target")));
  return metric;
}

// The metric's values against the golden ones: one value under the key "", or named values.
void expect_golden_values(const metrics::Metric& metric, const Json& golden_case) {
  std::map<std::string, double> expected;
  if (golden_case.contains("value")) expected[""] = golden_case.at("value").get<double>();
  if (golden_case.contains("values"))
    for (const auto& [key, value] : golden_case.at("values").items())
      expected[key] = value.get<double>();
  std::map<std::string, double> actual = metric.values();
  ASSERT_EQ(actual.size(), expected.size());
  for (const auto& [key, value] : expected) {
    ASSERT_TRUE(actual.count(key)) << "no value \"" << key << "\"";
    EXPECT_NEAR(actual.at(key), value, 1e-9 * std::max(1.0, std::abs(value))) << key;
  }
}

class MetricVsScikitLearn : public ::testing::TestWithParam<std::string> {};

TEST_P(MetricVsScikitLearn, ValueOverTwoBatchesAndTag) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  ASSERT_EQ(golden_case.at("batches").size(), 2u);
  auto metric = fed(golden_case, 0, 2);
  expect_golden_values(*metric, golden_case);
  std::string registered = read_spec("metric", golden_case.at("config").get<std::string>()).type();
  EXPECT_EQ(metric->tag_name(registered), golden_case.at("tag").get<std::string>());
}

TEST_P(MetricVsScikitLearn, MergedHalvesGiveTheWholeSetValue) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  auto first = fed(golden_case, 0, 1), second = fed(golden_case, 1, 2);
  first->merge(*second);
  expect_golden_values(*first, golden_case);
  // A rank that saw nothing yet takes the statistics it is given.
  auto empty = fed(golden_case, 0, 0);
  empty->merge(*first);
  expect_golden_values(*empty, golden_case);
  // Statistics restored from sums() give the same value (what ranks exchange).
  auto restored = fed(golden_case, 0, 0);
  restored->set_sums(first->sums());
  expect_golden_values(*restored, golden_case);
}

INSTANTIATE_TEST_SUITE_P(Golden, MetricVsScikitLearn, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenMetricCases, EveryGeneratedCaseIsTestedAndEveryMetricHasOne) {
  EXPECT_EQ(case_names_in(golden_cases()), case_names());
  for (const std::string& name : metrics::metric_registry().names()) {
    bool found = name == "accuracy";  // its own cases, in losses_metrics_golden_test.cpp
    for (const std::string& c : case_names()) found = found || c.rfind(name + "_", 0) == 0;
    EXPECT_TRUE(found) << name << " has no golden case in make_golden.py";
  }
}

}  // namespace metrics_golden_test
}  // namespace kiln::golden
