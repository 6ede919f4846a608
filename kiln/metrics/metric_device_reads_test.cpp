// Adding a batch to a metric reads nothing back from the device (no aten::_local_scalar_dense,
// the operator behind .item()): a training step that updates its metrics need not wait for the
// GPU. Reading the metric does.

#include <gtest/gtest.h>

#include "kiln/metrics/metric.h"
#include "tests/support/components.h"
#include "tests/support/operator_counter.h"

namespace kiln::metrics {
namespace metric_device_reads_test {

using kiln::testing::OperatorCounter;

constexpr const char* kRead = "aten::_local_scalar_dense";

std::unique_ptr<Metric> make(const std::string& spec) {
  return metric_registry().create(read_spec("metric", spec));
}

// Scores [8, 6] and targets [8] of a classification batch.
std::pair<torch::Tensor, torch::Tensor> classification_batch(int64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn({8, 6}), torch::randint(6, {8}, torch::kInt64)};
}

std::pair<torch::Tensor, torch::Tensor> regression_batch(int64_t seed) {
  torch::manual_seed(seed);
  return {torch::randn({8, 2}), torch::randn({8, 2})};
}

void expect_updates_read_nothing(const std::string& spec, bool regression) {
  SCOPED_TRACE(spec);
  std::unique_ptr<Metric> metric = make(spec);
  std::unique_ptr<Metric> reference = make(spec);
  OperatorCounter counter;
  for (int64_t seed = 1; seed <= 3; ++seed) {
    auto [output, target] = regression ? regression_batch(seed) : classification_batch(seed);
    metric->update(output, target);
  }
  EXPECT_EQ(counter.count(kRead), 0);
  EXPECT_GT(counter.total(), 0);   // the counter sees the updates' operators
  double value = metric->value();  // reading the metric may read the device
  // The sums are the same as a metric given the batches as one.
  std::vector<torch::Tensor> outputs, targets;
  for (int64_t seed = 1; seed <= 3; ++seed) {
    auto [output, target] = regression ? regression_batch(seed) : classification_batch(seed);
    outputs.push_back(output);
    targets.push_back(target);
  }
  reference->update(torch::cat(outputs), torch::cat(targets));
  EXPECT_NEAR(value, reference->value(), 1e-12);
}

TEST(MetricDeviceReads, AccuracyAndTopKAddBatchesWithoutReadingTheDevice) {
  expect_updates_read_nothing(R"("accuracy")", false);
  expect_updates_read_nothing(R"({"type": "top_k_accuracy", "k": 2})", false);
}

TEST(MetricDeviceReads, RegressionErrorsAddBatchesWithoutReadingTheDevice) {
  for (const char* name : {R"("mae")", R"("mse")", R"("rmse")"})
    expect_updates_read_nothing(name, true);
}

TEST(MetricDeviceReads, ClassCountsAddBatchesWithoutReadingTheDevice) {
  for (const char* spec : {R"("precision")", R"("recall")", R"({"type": "f1", "average": "micro"})",
                           R"("confusion_matrix")"})
    expect_updates_read_nothing(spec, false);
}

TEST(MetricDeviceReads, R2AndRocAucAddBatchesWithoutReadingTheDevice) {
  expect_updates_read_nothing(R"("r2")", true);
  std::unique_ptr<Metric> auc = make(R"("roc_auc")");
  torch::manual_seed(3);
  torch::Tensor scores = torch::randn({8, 2}), labels = torch::randint(2, {8}, torch::kInt64);
  OperatorCounter counter;
  auc->update(scores, labels);
  EXPECT_EQ(counter.count(kRead), 0);
  EXPECT_GT(counter.total(), 0);
}

TEST(MetricDeviceReads, RestoredSumsAddUpWithNewBatches) {
  // A merge of ranks replaces the sums (set_sums); later batches add to them.
  for (const char* spec :
       {R"("accuracy")", R"("rmse")", R"("r2")", R"("f1")", R"("confusion_matrix")"}) {
    SCOPED_TRACE(spec);
    bool regression = std::string(spec) == R"("rmse")" || std::string(spec) == R"("r2")";
    auto [first_output, first_target] = regression ? regression_batch(1) : classification_batch(1);
    auto [second_output, second_target] =
        regression ? regression_batch(2) : classification_batch(2);
    std::unique_ptr<Metric> restored = make(spec), whole = make(spec), first = make(spec);
    first->update(first_output, first_target);
    restored->set_sums(first->sums());
    restored->update(second_output, second_target);
    whole->update(torch::cat({first_output, second_output}),
                  torch::cat({first_target, second_target}));
    EXPECT_EQ(restored->sums().size(), whole->sums().size());
    EXPECT_NEAR(restored->value(), whole->value(), 1e-12);
  }
}

TEST(OperatorCounter, CountsTheOperatorsDispatchedWhileItLives) {
  torch::Tensor a = torch::ones({3});
  OperatorCounter counter;
  torch::Tensor b = a + a;
  EXPECT_GE(counter.count("aten::add"), 1);
  EXPECT_EQ(counter.count(kRead), 0);
  (void)b.sum().item<double>();
  EXPECT_EQ(counter.count(kRead), 1);
  counter.enable(false);
  (void)b.sum().item<double>();
  EXPECT_EQ(counter.count(kRead), 1);
  counter.enable(true);
  counter.reset();
  EXPECT_EQ(counter.total(), 0);
}

}  // namespace metric_device_reads_test
}  // namespace kiln::metrics
