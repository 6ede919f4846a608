// End-to-end: the regression and reconstruction examples (configs/examples/synthetic) learn
// their task: the validation loss ends far below what a model that learned nothing scores.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

// The last `val/loss` a `kiln train` printed, or -1.
double last_val_loss(const std::string& out) {
  size_t at = out.rfind("val/loss ");
  return at == std::string::npos ? -1 : std::stod(out.substr(at + 9));
}

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
}

TEST(TaskExamples, SignalAutoencoderRemovesMostOfTheNoise) {
  testing::TempDir dir;
  auto run = train_example(dir, "signal_autoencoder.yaml", "--set 'train.max=4 epochs'");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // Returning the noisy input unchanged scores 0.09 (the noise's variance).
  EXPECT_GT(last_val_loss(run.out), 0);
  EXPECT_LT(last_val_loss(run.out), 0.03) << run.out;
}

}  // namespace
}  // namespace kiln
