// What the trainer measures: the best value of `train.monitor` in either mode, throughput from
// the injected clock, and training metrics that span a whole logging window even when a
// validation falls inside it. The fakes of trainer_test_rig.h make every value exact.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/engine/trainer.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace trainer_metrics_test {

using test_rig::CountingMetric;
using test_rig::ScriptedMetric;
using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;

// Validations at steps 2, 4, 6 and 8 report val/score 0.5, 0.9, 0.2 and 0.7: the extremes are
// neither the first nor the last value.
TrainResult fit_with_scripted_score(TrainerRig& rig, const std::string& mode) {
  rig.metrics.clear();
  rig.metrics.push_back({"score", std::make_unique<CountingMetric>(&rig.now, 1.0)});
  rig.val_metrics.clear();
  rig.val_metrics.push_back(
      {"score", std::make_unique<ScriptedMetric>(std::vector<double>{0.5, 0.9, 0.2, 0.7})});
  TrainOptions options = train_options("8 steps", "2 steps", "100 steps");
  options.monitor = "val/score";
  options.mode = mode == "max" ? Mode::kMax : Mode::kMin;
  return rig.fit(options);
}

TEST(TrainerBest, ModeMaxKeepsTheHighestValueAndItsStep) {
  TrainerRig rig;
  TrainResult result = fit_with_scripted_score(rig, "max");
  ASSERT_THAT(rig.values_logged("val/score"), ElementsAre(0.5, 0.9, 0.2, 0.7));
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->metric, "val/score");
  EXPECT_EQ(result.best->value, 0.9);
  EXPECT_EQ(result.best->step, 4);
  EXPECT_EQ(result.last.at("val/score"), 0.7);
}

TEST(TrainerBest, ModeMinKeepsTheLowestValueAndItsStep) {
  TrainerRig rig;
  TrainResult result = fit_with_scripted_score(rig, "min");
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->metric, "val/score");
  EXPECT_EQ(result.best->value, 0.2);
  EXPECT_EQ(result.best->step, 6);
}

TEST(TrainerBest, CanMonitorATrainingTag) {
  TrainerRig rig(8, 0);
  TrainOptions options = train_options("12 steps", "1 epoch", "2 steps");
  options.monitor = "train/loss";
  TrainResult result = rig.fit(options);
  std::vector<double> losses = rig.values_logged("train/loss");
  std::vector<int64_t> steps = rig.steps_logged("train/loss");
  ASSERT_EQ(losses.size(), 6u);
  auto lowest = std::min_element(losses.begin(), losses.end());
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->metric, "train/loss");
  EXPECT_NEAR(result.best->value, *lowest, 1e-6 * std::abs(*lowest));
  EXPECT_EQ(result.best->step, steps[static_cast<size_t>(lowest - losses.begin())]);
}

TEST(TrainerBest, CountsTheFinalPartialLogWindow) {
  // log_every is never reached; the window flushed at the end is the monitor's only value.
  TrainerRig rig(8, 0);
  TrainOptions options = train_options("3 steps", "1 epoch", "100 steps");
  options.monitor = "train/count";
  TrainResult result = rig.fit(options);
  ASSERT_TRUE(result.best.has_value());
  EXPECT_EQ(result.best->value, 6);
  EXPECT_EQ(result.best->step, 3);
}

TEST(TrainerThroughput, CountsTrainingTimeOnlyNotValidation) {
  // Each training step takes 1 s of fake time and each validation 200 s (2 batches of 100 s).
  // A log window of 4 steps of 2 samples holds one validation: 8 samples in 4 s of training.
  TrainerRig rig;
  rig.fit(train_options("8 steps", "2 steps", "4 steps"));
  ASSERT_THAT(rig.steps_logged("val/loss"), ElementsAre(2, 4, 6, 8));
  EXPECT_THAT(rig.values_logged("train/samples_per_s"), ElementsAre(2.0, 2.0));
}

TEST(TrainerThroughput, IsExactWithoutValidation) {
  TrainerRig rig(8, 0);
  TrainOptions options = train_options("6 steps", "1 epoch", "3 steps");
  options.monitor = "train/loss";
  rig.fit(options);
  EXPECT_THAT(rig.values_logged("train/samples_per_s"), ElementsAre(2.0, 2.0));
}

TEST(TrainerMetrics, AValidationInsideALogWindowDoesNotResetTrainingMetrics) {
  // Steps 1-4 form one window with a validation after step 2: train/count must still count the
  // 8 training examples of all four steps, and val/count the 6 validation examples only.
  TrainerRig rig;
  rig.fit(train_options("8 steps", "2 steps", "4 steps"));
  EXPECT_THAT(rig.steps_logged("train/count"), ElementsAre(4, 8));
  EXPECT_THAT(rig.values_logged("train/count"), ElementsAre(8, 8));
  EXPECT_THAT(rig.values_logged("val/count"), ElementsAre(6, 6, 6, 6));
}

TEST(TrainerMetrics, ValidationLeavesTheModelInTrainingMode) {
  TrainerRig rig;
  rig.fit(train_options("4 steps", "1 step", "2 steps"));
  EXPECT_TRUE(rig.model->is_training());
}

TEST(TrainerMetrics, LastHoldsTheLatestValueOfEveryTag) {
  TrainerRig rig;
  TrainResult result = rig.fit(train_options("6 steps", "4 steps", "4 steps"));
  for (const char* tag :
       {"train/loss", "train/lr", "train/samples_per_s", "train/count", "val/loss", "val/count"}) {
    ASSERT_TRUE(result.last.count(tag)) << tag;
    std::vector<double> values = rig.values_logged(tag);
    ASSERT_FALSE(values.empty()) << tag;
    EXPECT_NEAR(result.last.at(tag), values.back(), 1e-6 * std::abs(values.back())) << tag;
  }
  EXPECT_EQ(result.last.at("train/count"), 4);  // steps 5 and 6
}

}  // namespace trainer_metrics_test
}  // namespace kiln::engine
