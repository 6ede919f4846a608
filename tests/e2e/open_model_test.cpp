// End-to-end: a trained run is opened from its folder alone (inputs.json gives the model's
// example shape), so `kiln eval RUN --split test` reads only the test data and `kiln model
// summary RUN` (or a checkpoint directory) reads no data at all. Shown with the data files moved
// away after training.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/json.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

constexpr const char* kConfig = R"(
name: opened
seed: 3
data:
  train: {type: idx, images: train-images.gz, labels: train-labels.gz, limit: 512}
  test: {type: idx, images: test-images.gz, labels: test-labels.gz, limit: 256}
  batch_size: 32
  transforms:
    eval: [{type: normalize, mean: 0.286, std: 0.353}]
    train: [{type: normalize, mean: 0.286, std: 0.353}]
model:
  type: sequential
  layers: [flatten, {type: linear, out: 64}, relu, {type: linear, out: 10}]
optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
train: {max: 20 steps, validate_every: 20 steps, monitor: train/loss}
runtime: {threads: 1}
)";

class OpenModel : public ::testing::Test {
 protected:
  // Copies the Fashion-MNIST test files in as both splits' data, and trains in that folder.
  void SetUp() override {
    std::string source = "/usr/share/datasets/fashion-mnist/t10k-";
    for (const char* split : {"train", "test"}) {
      fs::copy_file(source + "images-idx3-ubyte.gz", dir_.file(std::string(split) + "-images.gz"));
      fs::copy_file(source + "labels-idx1-ubyte.gz", dir_.file(std::string(split) + "-labels.gz"));
    }
    dir_.write("opened.yaml", kConfig);
    auto result = in_dir("train opened.yaml --runs-root runs");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    run_ = dir_.file(testing::run_dir_of(result.out));
  }
  testing::CommandResult in_dir(const std::string& args) {
    return testing::run_command("cd " + dir_.path() + " && " + kiln(args));
  }
  void move_away(const std::string& split) {
    fs::create_directories(dir_.file("away"));
    for (const char* part : {"-images.gz", "-labels.gz"})
      fs::rename(dir_.file(split + part), dir_.file("away/" + split + part));
  }

  testing::TempDir dir_;
  std::string run_;
};

TEST_F(OpenModel, TheRunSavesWhatTheModelTakes) {
  Json inputs = Json::parse(testing::read_file(run_ + "/inputs.json"));
  EXPECT_EQ(inputs["inputs"][0]["shape"], Json({1, 28, 28}));
  EXPECT_EQ(inputs["inputs"][0]["dtype"], "float32");
  EXPECT_EQ(testing::read_file(testing::latest_checkpoint(run_) + "/inputs.json"),
            testing::read_file(run_ + "/inputs.json"));
}

TEST_F(OpenModel, EvalOfTheTestSplitReadsNoTrainingData) {
  move_away("train");
  auto result = in_dir("eval " + run_ + " --split test --json");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  Json values = Json::parse(result.out);
  EXPECT_GT(values["test/accuracy"].get<double>(), 0.3);
  EXPECT_THAT(result.err, HasSubstr("test: 256 examples"));
}

TEST_F(OpenModel, EvalReadsTheEvaluatedSplit) {
  move_away("test");
  auto result = in_dir("eval " + run_ + " --split test --json");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("cannot open test-"));
  EXPECT_THAT(result.err, HasSubstr("(the dataset at data.test)"));
}

TEST_F(OpenModel, TheSummaryOfARunOrACheckpointReadsNoData) {
  move_away("train");
  move_away("test");
  for (const std::string& path : {run_, testing::latest_checkpoint(run_)}) {
    SCOPED_TRACE(path);
    auto result = in_dir("model summary " + path);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("50,890"));
  }
}

TEST_F(OpenModel, ARunsSummaryTakesNoOtherShape) {
  auto result = in_dir("model summary " + run_ + " --input-shape 1,32,32");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("drop --input-shape"));
}

}  // namespace
}  // namespace kiln
