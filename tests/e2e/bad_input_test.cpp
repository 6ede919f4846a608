// End-to-end: issue #17's reproductions through the kiln binary. Each must end with exit 1 (bad
// data) or 2 (bad config or usage) and a message naming the file, record and offset or the config
// path, within seconds: never exit 3, a signal or a hang.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/crc32c.h"
#include "kiln/io/byte_stream.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }
std::string testdata(const std::string& name) { return std::string(KILN_TESTDATA) + "/" + name; }
std::string example(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/configs/examples/fashion_mnist/" + name;
}

// A TFRecord of one good record after a header whose length is 2^64 - 1 with a valid CRC.
void write_huge_length_file(const std::string& path, io::Compression compression) {
  std::string bytes(8, static_cast<char>(0xff));
  uint32_t crc = crc32c_mask(crc32c(bytes.data(), 8));
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>((crc >> (8 * i)) & 0xff);
  bytes += io::frame_tfrecord("record");
  auto out = io::open_output(path, compression);
  out->write(bytes.data(), bytes.size());
  out->close();
}

TEST(BadInput, AHugeLengthFieldIsADataErrorPlainAndGzipped) {
  testing::TempDir dir;
  for (auto compression : {io::Compression::kNone, io::Compression::kGzip}) {
    std::string path = dir.file(std::string("huge.") + io::compression_name(compression));
    write_huge_length_file(path, compression);
    auto result = testing::run_command(kiln("data inspect " + path));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr(path + ", record 0, byte offset 0: the length field says "
                                             "18446744073709551615 bytes"));
  }
}

// The penguins of TFX's testdata have species 0, 1 and 2; a two-way classifier cannot take 2.
std::string penguin_config(const std::string& extra) {
  return "version: 1\nname: penguins\nseed: 1\ndata:\n"
         "  train: {type: tfrecord, files: " +
         testdata("tfx_penguin_train.tfrecord.gz") +
         ", features: {culmen_length_mm: {shape: [1]}, species: {dtype: int64}}, "
         "input: culmen_length_mm, target: species" +
         extra +
         "}\n"
         "  batch_size: 16\n"
         "model: {type: sequential, layers: [{type: linear, out: 2}]}\n"
         "optimizer: {type: sgd, lr: 0.01}\n"
         "train: {max: 20 steps, monitor: train/loss}\nruntime: {threads: 1}\n";
}

TEST(BadInput, ALabelOutsideTheModelsClassesNamesFileRecordAndFeature) {
  testing::TempDir dir;
  for (const char* cache : {"", ", cache: none"}) {
    SCOPED_TRACE(cache);
    std::string config = dir.write("penguins.yaml", penguin_config(cache));
    auto result = testing::run_command(kiln("train " + config + " --runs-root " + dir.file("r")));
    EXPECT_EQ(result.exit_code, 1) << result.err;
    EXPECT_THAT(result.err, HasSubstr("tfx_penguin_train.tfrecord.gz, record "));
    EXPECT_THAT(result.err, HasSubstr("byte offset"));
    EXPECT_THAT(result.err, HasSubstr("feature \"species\": class 2 is outside the model's 2 "
                                      "classes (0 to 1)"));
  }
}

TEST(BadInput, ALabelOutsideTheClassesOfIdxDataNamesTheExample) {
  // mlp.yaml's last layer (layers[6]) is its classifier; a 5-way one cannot take labels 5 to 9.
  auto result = testing::run_command(
      kiln("train " + example("mlp.yaml") + " --set 'model.layers[6].out=5' --dry-run"));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("data error in example "));
  EXPECT_THAT(result.err, HasSubstr("is outside the model's 5 classes (0 to 4)"));
}

TEST(BadInput, BadYamlEndsInAConfigErrorAtOnce) {
  testing::TempDir dir;
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"a: &a {b: *a}\n", "refers to a node that contains it"},
                        Case{"seed: \xff\n", "byte 0xff at line 1, column 7"},
                        Case{"seed: 1\nseed: 2\n", "duplicate key \"seed\" (lines 1 and 2)"}}) {
    SCOPED_TRACE(c.text);
    std::string config = dir.write("bad.yaml", c.text);
    auto result = testing::run_command(kiln("config show " + config));
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_THAT(result.err, HasSubstr(c.message));
    EXPECT_THAT(result.err, HasSubstr("bad.yaml"));
  }
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char name = 'b'; name <= 'i'; ++name) {
    std::string p(1, static_cast<char>(name - 1));
    laughs += std::string(1, name) + ": &" + name + " [*" + p + ", *" + p + ", *" + p + ", *" + p +
              ", *" + p + ", *" + p + ", *" + p + ", *" + p + ", *" + p + "]\n";
  }
  auto result = testing::run_command(kiln("config show " + dir.write("laughs.yaml", laughs)));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("expands to more than"));
  auto set = testing::run_command(
      kiln("config show " + example("cnn.yaml") + " --set \"$(printf 'seed=\\377')\""));
  EXPECT_EQ(set.exit_code, 2) << set.err;
  EXPECT_THAT(set.err, HasSubstr("(--set): byte 0xff"));
}

TEST(BadInput, InputsOfAnotherPrecisionThanTheWeightsAreAConfigError) {
  auto result = testing::run_command(
      kiln("train " + example("cnn.yaml") +
           " --set 'data.transforms.train=[{type: cast, dtype: float64}]' --dry-run"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("data.transforms.train"));
  EXPECT_THAT(result.err, HasSubstr("deliver float64 inputs, but the model's weights are float32"));
}

TEST(BadInput, MoreShardsThanOpenFilesAreRefusedUpFront) {
  testing::TempDir dir;
  std::string csv = dir.write("t.csv", "label,x\n0,1.5\n1,2.5\n");
  auto result =
      testing::run_command("ulimit -n 256; " + kiln("data convert csv " + csv + " --out " +
                                                    dir.file("t") + " --shards 20000"));
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_THAT(result.err, HasSubstr("20000 shards would be open at once"));
}

}  // namespace
}  // namespace kiln
