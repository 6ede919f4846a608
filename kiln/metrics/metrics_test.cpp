// What the golden values cannot show: the metrics' config errors name the key and the fix, and
// outputs or targets a metric cannot measure are refused with both shapes named.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/metrics/metric.h"
#include "tests/support/components.h"

namespace kiln::metrics {
namespace metrics_test {

using ::testing::HasSubstr;

std::string config_error(const std::string& config) {
  try {
    read_spec("metric", config);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::unique_ptr<Metric> make(const std::string& config) {
  return metric_registry().create(read_spec("metric", config));
}

std::string update_error(const std::string& config, const torch::Tensor& output,
                         const torch::Tensor& target) {
  try {
    make(config)->update(output, target);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Metrics, RefuseMalformedOptions) {
  EXPECT_THAT(config_error("f2"), HasSubstr("unknown metric \"f2\"; did you mean \"f1\"?"));
  EXPECT_THAT(config_error("{type: top_k_accuracy, k: 0}"),
              HasSubstr("config error at metric.k: expected integer >= 1, got 0"));
  EXPECT_THAT(config_error("{type: top_k_accuracy, k: 2.5}"),
              HasSubstr("config error at metric.k: expected integer"));
  for (const char* name : {"precision", "recall", "f1"}) {
    std::string type = std::string("{type: ") + name;
    EXPECT_THAT(config_error(type + ", average: weighted}"),
                HasSubstr("config error at metric.average: expected one of \"macro\", \"micro\", "
                          "got \"weighted\""));
    EXPECT_THAT(config_error(type + ", threshold: 1}"),
                HasSubstr("config error at metric.threshold: expected number in (0, 1)"));
    EXPECT_THAT(config_error(type + ", threshold: 0}"),
                HasSubstr("config error at metric.threshold"));
    EXPECT_THAT(config_error(type + ", k: 3}"), HasSubstr("config error at metric.k: unknown key"));
  }
  EXPECT_THAT(config_error("{type: roc_auc, average: macro}"),
              HasSubstr("config error at metric.average: unknown key"));
}

TEST(Metrics, ClassMetricsNameBothShapes) {
  for (const char* name : {"precision", "recall", "f1"}) {
    EXPECT_THAT(update_error(name, torch::zeros({4, 3}), torch::zeros({4, 2})),
                HasSubstr("got outputs of shape [4, 3] and targets of shape [4, 2]"));
    EXPECT_THAT(update_error(name, torch::zeros({4, 3}), torch::tensor({0, 1, 2, 3})),
                HasSubstr("target class 3 is out of range for 3 classes"));
  }
  EXPECT_THAT(update_error("confusion_matrix", torch::zeros({4, 3}), torch::zeros({4, 3})),
              HasSubstr("confusion_matrix expects scores [batch, classes] and class indices "
                        "[batch], got scores [4, 3] and targets [4, 3]"));
  EXPECT_THAT(update_error("confusion_matrix", torch::zeros({2, 3}), torch::tensor({0, -1})),
              HasSubstr("target class -1 is out of range for 3 classes"));
  EXPECT_THAT(
      update_error("{type: top_k_accuracy, k: 3}", torch::zeros({2, 3}), torch::tensor({0, 1})),
      HasSubstr("k = 3 is not below the number of classes (3)"));
  EXPECT_THAT(update_error("top_k_accuracy", torch::zeros({2, 10}), torch::zeros({2, 10})),
              HasSubstr("got scores [2, 10] and targets [2, 10]"));
}

TEST(Metrics, OneMetricMeasuresOneKindOfTask) {
  auto f1 = make("f1");
  f1->update(torch::zeros({2, 3}), torch::tensor({0, 1}));
  try {
    f1->update(torch::zeros({2, 3}), torch::zeros({2, 3}));
    FAIL() << "multi-label after multiclass";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("multi-label targets after class indices"));
  }
  auto other = make("f1");
  other->update(torch::zeros({2, 4}), torch::tensor({0, 1}));
  EXPECT_THROW(f1->merge(*other), Error) << "3 classes and 4 classes do not merge";
}

TEST(Metrics, RocAucNeedsBinaryOutputsAndZeroOneTargets) {
  EXPECT_THAT(update_error("roc_auc", torch::zeros({4, 3}), torch::tensor({0, 1, 1, 0})),
              HasSubstr("roc_auc is for binary tasks: outputs [batch], [batch, 1] (a logit) or "
                        "[batch, 2] (two classes' scores), got [4, 3]"));
  EXPECT_THAT(update_error("roc_auc", torch::zeros({4, 1}), torch::tensor({0, 1, 2, 0})),
              HasSubstr("targets must be 0 or 1, got 2"));
  EXPECT_THAT(update_error("roc_auc", torch::zeros({4, 1}), torch::tensor({0, 1})),
              HasSubstr("expects 0/1 targets [batch] for outputs [4, 1], got targets [2]"));
  auto auc = make("roc_auc");
  auc->update(torch::tensor({0.3, 0.1}), torch::tensor({1, 1}));
  EXPECT_TRUE(std::isnan(auc->value())) << "undefined with one class only";
  auc->update(torch::tensor({0.2}), torch::tensor({0}));
  EXPECT_DOUBLE_EQ(auc->value(), 0.5);
  EXPECT_FALSE(auc->summable());
  // A diverged model's NaN score has no rank: the area is undefined, not sorted at random.
  auc->update(torch::tensor({std::nan(""), 0.4}), torch::tensor({0, 1}));
  EXPECT_TRUE(std::isnan(auc->value()));
}

TEST(Metrics, RegressionMetricsNameBothShapes) {
  for (const char* name : {"mse", "mae", "rmse", "r2"}) {
    EXPECT_THAT(update_error(name, torch::zeros({4, 3}), torch::zeros({4})),
                HasSubstr(std::string(name) + " expects outputs and targets of the same shape, "
                                              "got outputs [4, 3] and targets [4]"));
    EXPECT_EQ(update_error(name, torch::zeros({4, 1}), torch::zeros({4})), "no error") << name;
  }
}

TEST(Metrics, R2OfAConstantTargetIsOneWhenExactAndZeroOtherwise) {
  auto r2 = make("r2");
  r2->update(torch::full({3, 1}, 2.0), torch::full({3, 1}, 2.0));
  EXPECT_DOUBLE_EQ(r2->value(), 1.0);
  r2->reset();
  r2->update(torch::tensor({{1.0}, {2.0}, {3.0}}), torch::full({3, 1}, 2.0));
  EXPECT_DOUBLE_EQ(r2->value(), 0.0);
}

TEST(Metrics, R2CombinesTheSumsRanksConcatenate) {
  torch::Tensor y = torch::tensor({{1.0, 5.0}, {2.0, 4.0}, {4.0, 4.5}, {7.0, 3.0}, {8.0, 2.0}});
  torch::Tensor predicted =
      y + torch::tensor({{0.5, -0.25}, {-0.5, 0.0}, {0.0, 0.5}, {1.0, 0.25}, {-1.0, 0.0}});
  auto whole = make("r2"), first = make("r2"), second = make("r2"), combined = make("r2");
  whole->update(predicted, y);
  first->update(predicted.slice(0, 0, 2), y.slice(0, 0, 2));
  second->update(predicted.slice(0, 2), y.slice(0, 2));
  std::vector<double> sums = first->sums(), theirs = second->sums();
  sums.insert(sums.end(), theirs.begin(), theirs.end());
  combined->set_sums(sums);
  EXPECT_FALSE(whole->summable());
  EXPECT_NEAR(combined->value(), whole->value(), 1e-12);
  EXPECT_GT(whole->value(), 0.5);
}

}  // namespace metrics_test
}  // namespace kiln::metrics
