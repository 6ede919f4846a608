// End-to-end: `kiln model summary` prints its table for every example config (shape from the
// data), for a model section alone with --input-shape, and refuses bad shapes and configs
// without a model, exit 2.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// Runs in a folder holding data/fashion_mnist/train-*.tfrecord.gz (from the test images), where
// cnn_tfrecord.yaml looks for them, data/shapes/ (its generator's), and a link to the
// repository's configs/, where the penguin example looks for its records.
TEST(ModelSummary, PrintsTheTableForEveryExampleConfig) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.file("work"));
  std::filesystem::create_directory_symlink(std::string(KILN_SOURCE_DIR) + "/configs",
                                            dir.file("work/configs"));
  std::string images = "/usr/share/datasets/fashion-mnist/t10k-";
  auto convert = testing::run_command(
      kiln("data convert idx --images " + images + "images-idx3-ubyte.gz --labels " + images +
           "labels-idx1-ubyte.gz --out " + dir.file("work/data/fashion_mnist/train") +
           " --compression gzip"));
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  auto shapes = testing::run_command("cd " + dir.file("work") + " && /usr/bin/python3 " +
                                     KILN_SOURCE_DIR + "/configs/examples/shapes/make_shapes.py");
  ASSERT_EQ(shapes.exit_code, 0) << shapes.err;
  int configs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           std::string(KILN_SOURCE_DIR) + "/configs/examples")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    auto result = testing::run_command("cd " + dir.file("work") + " && " +
                                       kiln("model summary " + entry.path().string()));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, HasSubstr("path"));
    EXPECT_THAT(result.out, HasSubstr("(model)"));
    EXPECT_THAT(result.out, HasSubstr("multiply-accumulates per example"));
    ++configs;
  }
  EXPECT_GE(configs, 3);
}

TEST(ModelSummary, AModelSectionAloneNeedsOnlyAnInputShape) {
  testing::TempDir dir;
  std::string config =
      dir.write("model.yaml", "model: {type: resnet, depth: 18, num_classes: 1000}\n");
  auto result = testing::run_command(kiln("model summary " + config + " --input-shape 3,224,224"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("input [3, 224, 224]"));
  EXPECT_THAT(result.out, HasSubstr("layer4.1.conv2"));
  EXPECT_THAT(result.out, HasSubstr("[512, 7, 7]"));
  // torchvision's resnet18: 11,689,512 parameters, 1.814 G multiply-accumulates at 224x224.
  EXPECT_THAT(result.out, HasSubstr("parameters: 11,689,512 (11,689,512 trainable, 0 frozen)"));
  EXPECT_THAT(result.out, HasSubstr("multiply-accumulates per example: 1,814,073,344"));

  auto shallow =
      testing::run_command(kiln("model summary " + config + " --input-shape 3,32,32 --depth 1"));
  EXPECT_THAT(shallow.out, HasSubstr("  layer4 "));
  EXPECT_THAT(shallow.out, ::testing::Not(HasSubstr("layer4.1")));
}

TEST(ModelSummary, RefusesBadShapesAndMissingModels) {
  testing::TempDir dir;
  std::string config = dir.write("model.yaml", "model: {type: mlp, num_classes: 2}\n");
  auto bad_shape = testing::run_command(kiln("model summary " + config + " --input-shape 1,x"));
  EXPECT_EQ(bad_shape.exit_code, 2);
  EXPECT_THAT(bad_shape.err, HasSubstr("--input-shape expects positive sizes"));

  std::string no_model = dir.write("none.yaml", "seed: 3\n");
  auto missing = testing::run_command(kiln("model summary " + no_model + " --input-shape 4"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("model"));

  std::string wrong = dir.write("wrong.yaml", "model: {type: resnet, depth: 7}\n");
  auto depth = testing::run_command(kiln("model summary " + wrong + " --input-shape 3,8,8"));
  EXPECT_EQ(depth.exit_code, 2);
  EXPECT_THAT(depth.err, HasSubstr("model.depth"));
}

}  // namespace
}  // namespace kiln
