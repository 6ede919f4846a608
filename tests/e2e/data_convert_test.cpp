// End-to-end: `kiln data convert idx` writes sharded TFRecords that `kiln data inspect` reads back,
// and leaves nothing behind when the input is bad.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/json.h"
#include "kiln/io/idx.h"
#include "kiln/io/image_codec.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string write_idx(const testing::TempDir& dir, const std::string& name,
                      std::vector<int64_t> dims) {
  io::IdxArray array{io::IdxType::kUint8, std::move(dims), {}};
  array.data.resize(static_cast<size_t>(array.element_count()), 7);
  return dir.write(name, io::encode_idx(array));
}

TEST(DataConvert, IdxToShardedGzipTfRecordsThatInspectReads) {
  testing::TempDir dir;
  std::string images = write_idx(dir, "images.idx", {5, 4, 3});
  std::string labels = write_idx(dir, "labels.idx", {5});
  auto result = testing::run_command(kiln("data convert idx --images " + images + " --labels " +
                                          labels + " --out " + dir.file("out/train") +
                                          " --shards 2 --compression gzip"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("wrote 5 records"));
  EXPECT_THAT(result.out, HasSubstr("to 2 shards"));
  int64_t total = 0;
  for (const char* shard :
       {"train-00000-of-00002.tfrecord.gz", "train-00001-of-00002.tfrecord.gz"}) {
    auto inspect = testing::run_command(kiln("data inspect --json " + dir.file("out/") + shard));
    ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
    Json report = Json::parse(inspect.out);
    EXPECT_EQ(report["compression"], "gzip");
    EXPECT_EQ(report["first"]["height"], Json::array({4}));
    EXPECT_EQ(report["first"]["width"], Json::array({3}));
    EXPECT_EQ(report["first"]["label"], Json::array({7}));
    total += report["records"].get<int64_t>();
  }
  EXPECT_EQ(total, 5);
}

TEST(DataConvert, CsvRowsBecomeTypedExamples) {
  testing::TempDir dir;
  std::string csv =
      dir.write("penguins.csv", "species,culmen_mm,island\n0,39.1,Torgersen\n1,,Dream\n");
  auto result = testing::run_command(
      kiln("data convert csv " + csv + " --out " + dir.file("p") + " --compression zlib"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("wrote 2 records"));
  auto inspect =
      testing::run_command(kiln("data inspect --json " + dir.file("p-00000-of-00001.tfrecord.zz")));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  Json report = Json::parse(inspect.out);
  EXPECT_EQ(report["features"]["species"]["type"], "int64_list");
  EXPECT_EQ(report["features"]["culmen_mm"]["type"], "float_list");
  EXPECT_EQ(report["features"]["culmen_mm"]["min_len"], 0);  // the empty cell
  EXPECT_EQ(report["features"]["island"]["type"], "bytes_list");
  EXPECT_EQ(report["first"]["island"], Json::array({"Torgersen"}));
}

TEST(DataConvert, ARaggedCsvNamesTheRow) {
  testing::TempDir dir;
  std::string csv = dir.write("bad.csv", "a,b\n1,2\n3\n");
  auto result = testing::run_command(kiln("data convert csv " + csv + " --out " + dir.file("o")));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("record 1, byte offset 8"));
}

TEST(DataConvert, AnImageFolderBecomesEncodedImageRecords) {
  testing::TempDir dir;
  std::string images = write_idx(dir, "unused.idx", {1, 2, 2});  // a non-image file is skipped
  fs::create_directories(dir.file("pets/cat"));
  fs::copy_file(images, dir.file("pets/cat/readme.idx"));
  auto missing = testing::run_command(
      kiln("data convert image_folder " + dir.file("pets") + " --out " + dir.file("o")));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no class folder"));

  dir.write("pets/cat/a.png", io::encode_png(io::Image{2, 2, 1, {0, 1, 2, 3}}));
  auto result = testing::run_command(
      kiln("data convert image_folder " + dir.file("pets") + " --out " + dir.file("o")));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto inspect =
      testing::run_command(kiln("data inspect --json " + dir.file("o-00000-of-00001.tfrecord")));
  Json first = Json::parse(inspect.out)["first"];
  EXPECT_EQ(first["image/format"], Json::array({"PNG"}));
  EXPECT_EQ(first["image/class/text"], Json::array({"cat"}));
  EXPECT_TRUE(first["image/encoded"][0].contains("b64"));  // PNG bytes are not UTF-8
}

TEST(DataConvert, BadInputExits1AndLeavesNoFiles) {
  testing::TempDir dir;
  std::string images = write_idx(dir, "images.idx", {5, 4, 3});
  std::string labels = write_idx(dir, "labels.idx", {4});
  auto result = testing::run_command(kiln("data convert idx --images " + images + " --labels " +
                                          labels + " --out " + dir.file("out/train")));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("4 labels for 5 images"));
  EXPECT_TRUE(fs::is_empty(dir.file("out")));  // no shard, no .partial
}

TEST(DataConvert, AShardCountBelowOneIsAUsageError) {
  testing::TempDir dir;
  std::string images = write_idx(dir, "images.idx", {1, 2, 2});
  auto result = testing::run_command(
      kiln("data convert idx --images " + images + " --out " + dir.file("x") + " --shards 0"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--shards"));
}

}  // namespace
}  // namespace kiln
