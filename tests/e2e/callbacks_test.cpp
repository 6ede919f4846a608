// End-to-end: early stopping ends a run whose validation loss has stalled (the curve example
// reaches its noise floor within a few epochs); with an ema callback, `kiln eval` evaluates the
// averaged weights, and the final checkpoint keeps the raw ones beside them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/binary_task.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_dir_of;

testing::CommandResult train_curve(const testing::TempDir& dir, const std::string& extra_yaml) {
  std::string extra = dir.write("extra.yaml", extra_yaml);
  return testing::run_command(std::string(KILN_BINARY) + " train " + KILN_SOURCE_DIR +
                              "/configs/examples/synthetic/curve_regression.yaml " + extra +
                              " --runs-root " + dir.file("runs"));
}

TEST(EarlyStoppingE2e, EndsARunWhoseValidationLossHasStalled) {
  testing::TempDir dir;
  auto run = train_curve(dir,
                         "train: {validate_every: 1 epoch}\n"
                         "callbacks: [{type: early_stopping, patience: 3, min_delta: 0.0005}]\n");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("stopping at step"));
  EXPECT_THAT(run.out, HasSubstr("val/loss has not improved"));
  // 40 epochs of 32 steps were asked for; the loss stalls long before.
  EXPECT_THAT(run.out,
              Not(HasSubstr("checkpoint: " + run_dir_of(run.out) + "/checkpoints/step-000001280")));
}

TEST(EmaE2e, EvalUsesTheAveragedWeights) {
  testing::TempDir dir;
  // A constant, large learning rate keeps the raw weights moving, so the average differs.
  auto run = train_curve(dir,
                         "scheduler: constant\n"
                         "train: {max: 10 epochs, validate_every: 10 epochs}\n"
                         "callbacks: [{type: ema, decay: 0.9}]\n");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string run_dir = run_dir_of(run.out);
  std::string checkpoint = run_dir + "/checkpoints/step-000000320";
  EXPECT_TRUE(std::filesystem::exists(checkpoint + "/ema.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(checkpoint + "/model.safetensors"));
  auto eval = testing::run_command(std::string(KILN_BINARY) + " eval " + run_dir + " --json");
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  // The last validation during training evaluated the average; eval reproduces its value.
  std::ifstream metrics(run_dir + "/metrics.csv");
  std::string line, last_val;
  while (std::getline(metrics, line))
    if (line.find(",val,loss,") != std::string::npos) last_val = line;
  ASSERT_FALSE(last_val.empty());
  size_t value_at = last_val.find(",val,loss,") + 10;
  double trained = std::stod(last_val.substr(value_at));
  size_t json_at = eval.out.find("\"val/loss\":");
  ASSERT_NE(json_at, std::string::npos) << eval.out;
  EXPECT_NEAR(std::stod(eval.out.substr(json_at + 11)), trained, 1e-6 * trained);
}

// roc_auc on a validation set of one class is NaN at every validation: no checkpoint is kept as
// its best, early stopping waits it out, stop_at does not fire, and the run resumes.
TEST(NanMetricE2e, IsNeverTheBestNorAGoalAndTheRunResumes) {
  testing::TempDir dir;
  std::string config = dir.write(
      "nan.yaml",
      "version: 1\nname: nan\nseed: 1\n"
      "data:\n"
      "  train: {type: csv, file: " +
          dir.write("train.csv", testing::binary_rows(200)) +
          ", target: label}\n"
          "  val: {type: csv, file: " +
          dir.write("val.csv", testing::binary_rows(50, /*one_class=*/true)) +
          ", target: label}\n"
          "  batch_size: 20\n"
          "model: {type: mlp, num_classes: 2, hidden: [8]}\n"
          "loss: cross_entropy\nmetrics: [roc_auc]\noptimizer: {type: sgd, lr: 0.1}\n"
          "train: {max: 50 steps, validate_every: 10 steps, monitor: val/roc_auc, mode: max, "
          "stop_at: 0.5}\n"
          "callbacks: [{type: checkpoint, every: 10 steps, keep_last: 1, keep_best: 1}, "
          "{type: early_stopping, patience: 3}]\n");
  auto run = testing::run_command(std::string(KILN_BINARY) + " train " + config + " --runs-root " +
                                  dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("val/roc_auc has been NaN for 3 validations (patience)"));
  EXPECT_THAT(run.out, Not(HasSubstr("reached")));
  std::string run_dir = run_dir_of(run.out);
  EXPECT_THAT(testing::read_file(run_dir + "/summary.json"), HasSubstr("\"best\": null"));
  EXPECT_FALSE(std::filesystem::exists(run_dir + "/checkpoints/best"));
  // The checkpoint's latest values hold the NaN; resuming (with more steps, or a finished run
  // has nothing to resume) reads them back.
  EXPECT_THAT(testing::read_file(testing::latest_checkpoint(run_dir) + "/train_state.json"),
              HasSubstr("\"val/roc_auc\": \"nan\""));
  auto resumed = testing::run_command(std::string(KILN_BINARY) + " train --resume " + run_dir +
                                      " --set 'train.max=60 steps'");
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("resumed from " + run_dir + "/checkpoints/step-000000030"));
}

}  // namespace
}  // namespace kiln
