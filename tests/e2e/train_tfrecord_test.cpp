// End-to-end: Fashion-MNIST converted to TFRecords by `kiln data convert`, then trained on through
// the tfrecord dataset, as configs/examples/fashion_mnist/cnn_tfrecord.yaml does at full size.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kiln/core/json.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string tiny_tfrecord_config(const std::string& files) {
  std::string features =
      "{image: {shape: [28, 28, 1], channels_first: true, scale: 0.00392156862745098}, "
      "label: {dtype: int64}}";
  return "version: 1\nname: tiny_tfrecord\nseed: 3\ndata:\n"
         "  train: {type: tfrecord, files: " +
         files + ", features: " + features +
         ", limit: 512}\n"
         "  val: {type: tfrecord, files: " +
         files + ", features: " + features +
         ", limit: 256}\n"
         "  batch_size: 32\n"
         "model: {type: sequential, layers: [flatten, {type: linear, out: 64}, relu, "
         "{type: linear, out: 10}]}\n"
         "optimizer: {type: sgd, lr: 0.05, momentum: 0.9}\n"
         "train: {max: 30 steps, validate_every: 30 steps, monitor: val/accuracy, mode: max}\n"
         "runtime: {threads: 1}\n";
}

std::string read_text(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

// Writes the Fashion-MNIST test set as 2 zlib shards under dir/fm/.
void convert_test_set(const testing::TempDir& dir) {
  std::string root = kFashionMnist;
  auto convert = testing::run_command(kiln("data convert idx --images " + root +
                                           "/t10k-images-idx3-ubyte.gz --labels " + root +
                                           "/t10k-labels-idx1-ubyte.gz --out " +
                                           dir.file("fm/test") + " --shards 2 --compression zlib"));
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
}

TEST(TrainTfRecord, ConvertedFashionMnistTrainsThroughTheTfRecordDataset) {
  testing::TempDir dir;
  convert_test_set(dir);
  std::string config = dir.write("tiny.yaml", tiny_tfrecord_config(dir.file("fm/test-*")));
  auto train = testing::run_command(kiln("train " + config + " --runs-root " + dir.file("runs")));
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_THAT(train.out, HasSubstr("512 training examples"));
  std::string run = train.out.substr(5, train.out.find('\n') - 5);
  double accuracy = Json::parse(read_text(run + "/summary.json"))["final"]["val/accuracy"];
  EXPECT_GT(accuracy, 0.3);  // chance is 0.1
  EXPECT_THAT(read_text(run + "/metrics.csv"), HasSubstr(",train,time/data,"));
  // 512 examples make 16 batches of 32: step 30 stops after batch 14 of epoch 1.
  std::string checkpoint = read_text(run + "/checkpoints/latest");
  checkpoint.erase(checkpoint.find_last_not_of(" \n") + 1);
  Json state = Json::parse(read_text(run + "/checkpoints/" + checkpoint + "/train_state.json"));
  EXPECT_EQ(state["data"], Json::parse(R"({"epoch": 1, "batch": 14})"));
}

TEST(TrainTfRecord, DataBenchTimesThePipelineOfAConfig) {
  testing::TempDir dir;
  convert_test_set(dir);
  std::string config = dir.write("tiny.yaml", tiny_tfrecord_config(dir.file("fm/test-*")));
  auto bench = testing::run_command(kiln("data bench " + config + " --epochs 2 --json"));
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  Json rate = Json::parse(bench.out);
  EXPECT_EQ(rate["examples"], 1024);
  EXPECT_EQ(rate["batches"], 32);
  EXPECT_GT(rate["examples_per_s"].get<double>(), 0);
}

TEST(TrainTfRecord, ARecordThatDoesNotFitItsSpecStopsTrainingNamingIt) {
  testing::TempDir dir;
  convert_test_set(dir);
  std::string config = tiny_tfrecord_config(dir.file("fm/test-*"));
  config.replace(config.find("[28, 28, 1]"), 11, "[28, 27, 1]");
  auto train = testing::run_command(
      kiln("train " + dir.write("bad.yaml", config) + " --runs-root " + dir.file("runs")));
  EXPECT_EQ(train.exit_code, 1) << train.err;
  EXPECT_THAT(train.err, HasSubstr("fm/test-00000-of-00002.tfrecord.zz"));
  EXPECT_THAT(train.err,
              HasSubstr("feature \"image\": holds 784 bytes (a bytes_list, read one byte per "
                        "value: encoding raw), its shape [28, 27, 1] needs 756 values"));
  EXPECT_THAT(train.err, HasSubstr("offset"));
}

TEST(TrainTfRecord, AFeatureSpecMistakeIsAConfigErrorWithItsPath) {
  testing::TempDir dir;
  std::string config = tiny_tfrecord_config(dir.file("none-*"));
  config.replace(config.find("dtype: int64"), 12, "dtype: int32");
  auto result = testing::run_command(kiln("train " + dir.write("bad.yaml", config) + " --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("data.train.features.label.dtype"));
  EXPECT_THAT(result.err, HasSubstr("\"int64\""));
}

}  // namespace
}  // namespace kiln
