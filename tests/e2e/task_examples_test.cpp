// End-to-end: the regression (also in two train cycles), reconstruction and multi-label examples
// learn their task: the validation loss, r2 (or f1) end far from what a model that learned
// nothing scores.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

// The last value of `tag` (e.g. "val/loss") a `kiln train` printed, or -1.
double last_value(const std::string& out, const std::string& tag) {
  size_t at = out.rfind(tag + " ");
  return at == std::string::npos ? -1 : std::stod(out.substr(at + tag.size() + 1));
}

double last_val_loss(const std::string& out) { return last_value(out, "val/loss"); }

testing::CommandResult train_example(const testing::TempDir& dir, const std::string& config,
                                     const std::string& extra = "") {
  return testing::run_command(std::string(KILN_BINARY) + " train " + KILN_SOURCE_DIR +
                              "/configs/examples/synthetic/" + config + " --runs-root " +
                              dir.file("runs") + " " + extra);
}

TEST(TaskExamples, CurveRegressionFitsTheCurveDownToTheNoise) {
  testing::TempDir dir;
  auto run = train_example(dir, "curve_regression.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Predicting the mean of sin(x) scores about 0.5; the noise alone is 0.01.
  EXPECT_GT(last_val_loss(run.out), 0);
  EXPECT_LT(last_val_loss(run.out), 0.012) << run.out;
  // With the noise left, the fit explains 98% of the targets' variance (0.51); rmse is the root
  // of the loss (one output), as printed to 4 digits; mae of Gaussian noise is 0.8 of its sd.
  EXPECT_GT(last_value(run.out, "val/r2"), 0.97) << run.out;
  EXPECT_LT(last_value(run.out, "val/r2"), 1.0) << run.out;
  EXPECT_NEAR(last_value(run.out, "val/rmse"), std::sqrt(last_val_loss(run.out)), 2e-3) << run.out;
  EXPECT_NEAR(last_value(run.out, "val/mae"), 0.08, 0.01) << run.out;
}

// The val/loss of the last validation printed before `marker`, or -1.
double val_loss_before(const std::string& out, const std::string& marker) {
  size_t at = out.find(marker);
  return at == std::string::npos ? -1 : last_val_loss(out.substr(0, at));
}

TEST(TaskExamples, CurveStagesFitsTheHeadFirstThenFinetunesEverything) {
  testing::TempDir dir;
  auto run = train_example(dir, "curve_stages.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::HasSubstr("(4,288 frozen)"));  // the hidden layers in "head"
  double head = val_loss_before(run.out, "stage 2/2: finetune");
  EXPECT_GT(head, 0) << run.out;
  // Unfreezing fits what random features could not; predicting the mean scores about 0.5.
  EXPECT_LT(last_val_loss(run.out), 0.03) << run.out;
  EXPECT_LT(last_val_loss(run.out), head) << run.out;
}

TEST(TaskExamples, SignalAutoencoderRemovesMostOfTheNoise) {
  testing::TempDir dir;
  auto run = train_example(dir, "signal_autoencoder.yaml", "--set 'train.max=4 epochs'");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Returning the noisy input unchanged scores 0.09 (the noise's variance).
  EXPECT_GT(last_val_loss(run.out), 0);
  EXPECT_LT(last_val_loss(run.out), 0.03) << run.out;
  EXPECT_GT(last_value(run.out, "val/r2"), 0.9) << run.out;
  EXPECT_GT(last_value(run.out, "val/mae"), 0) << run.out;
}

TEST(TaskExamples, MultiLabelFrequenciesTagsTheFrequenciesPresent) {
  testing::TempDir dir;
  auto run = train_example(dir, "multi_label_frequencies.yaml");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Tagging every label as present scores f1 0.67 (precision 0.5, recall 1); tagging none, 0.
  EXPECT_GT(last_value(run.out, "val/f1"), 0.85) << run.out;
  EXPECT_GT(last_value(run.out, "val/f1_micro"), 0.85) << run.out;
  EXPECT_GT(last_value(run.out, "val/precision"), 0.8) << run.out;
  EXPECT_GT(last_value(run.out, "val/recall"), 0.8) << run.out;
}

}  // namespace
}  // namespace kiln
