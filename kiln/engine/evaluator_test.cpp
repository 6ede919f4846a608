// Evaluation over a whole split: exact means whatever the batch size, fresh metric statistics,
// and the model's mode restored afterwards.

#include "kiln/engine/evaluator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace evaluator_test {

using test_rig::random_dataset;

struct Parts {
  std::shared_ptr<models::Model> model = models::build_model(
      read_spec("model", "{type: sequential, layers: [{type: linear, out: 3}]}"), {4});
  std::shared_ptr<const losses::Loss> loss =
      losses::loss_registry().create(read_spec("loss", "cross_entropy"));
  metrics::Metric* accuracy = nullptr;  // owned by the objective
  Objective objective = make_objective();

  Objective make_objective() {
    std::vector<NamedMetric> metrics;
    metrics.push_back(
        {"accuracy", metrics::metric_registry().create(read_spec("metric", "accuracy"))});
    accuracy = metrics.back().metric.get();
    return Objective(test_rig::single_head(loss, std::move(metrics)));
  }
  MetricValues evaluate_in_batches_of(int64_t batch_size) {
    data::Loader loader(random_dataset(10, 3), {}, {batch_size, true, false, 1});
    return evaluate(*model, loader, objective, torch::kCPU, "test");
  }
};

TEST(Evaluate, GivesTheSameMeanLossAndMetricsForAnyBatchSize) {
  Parts parts;
  MetricValues whole = parts.evaluate_in_batches_of(10);
  ASSERT_EQ(whole.size(), 2u);
  for (int64_t batch_size : {1, 3, 4, 7}) {
    MetricValues batched = parts.evaluate_in_batches_of(batch_size);
    EXPECT_NEAR(batched.at("test/loss"), whole.at("test/loss"), 1e-6) << batch_size;
    EXPECT_DOUBLE_EQ(batched.at("test/accuracy"), whole.at("test/accuracy")) << batch_size;
  }
}

TEST(Evaluate, MatchesTheLossOverTheWholeSplitAtOnce) {
  Parts parts;
  auto dataset = random_dataset(10, 3);
  data::Batch all = dataset->gather(torch::arange(10, torch::kInt64));
  torch::NoGradGuard no_grad;
  torch::Tensor output = parts.model->forward(all.input);
  double expected = parts.loss->forward(output, all.target).item<double>();
  double accuracy = output.argmax(1).eq(all.target).to(torch::kDouble).mean().item<double>();
  MetricValues values = parts.evaluate_in_batches_of(3);
  EXPECT_NEAR(values.at("test/loss"), expected, 1e-6);
  EXPECT_DOUBLE_EQ(values.at("test/accuracy"), accuracy);
}

TEST(Evaluate, ResetsMetricsFirstAndRestoresTheTrainingMode) {
  Parts parts;
  MetricValues first = parts.evaluate_in_batches_of(4);
  parts.model->train();
  MetricValues second = parts.evaluate_in_batches_of(4);  // would count 20 examples without reset
  EXPECT_EQ(parts.accuracy->sums().at(1), 10);
  EXPECT_EQ(second, first);
  EXPECT_TRUE(parts.model->is_training());
  parts.model->eval();
  parts.evaluate_in_batches_of(4);
  EXPECT_FALSE(parts.model->is_training());
}

}  // namespace evaluator_test
}  // namespace kiln::engine
