#include "kiln/io/convert_idx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `count` images of 2x3 pixels where every pixel of image i is i, and labels i % 10.
struct IdxFiles {
  std::string images, labels;
};

IdxFiles write_idx_files(const testing::TempDir& dir, int64_t count, int64_t label_count) {
  IdxArray images{IdxType::kUint8, {count, 2, 3}, {}};
  for (int64_t i = 0; i < count; ++i) images.data.insert(images.data.end(), 6, uint8_t(i));
  IdxArray labels{IdxType::kUint8, {label_count}, {}};
  for (int64_t i = 0; i < label_count; ++i) labels.data.push_back(uint8_t(i % 10));
  return {dir.write("images.idx", encode_idx(images)), dir.write("labels.idx", encode_idx(labels))};
}

std::vector<Example> read_examples(const std::string& path) {
  TfRecordReader reader(path);
  std::vector<Example> examples;
  std::string record;
  while (reader.next(record)) examples.push_back(parse_example(record));
  return examples;
}

TEST(ShardPath, FollowsTheTensorFlowNaming) {
  EXPECT_EQ(shard_path("out/train", 2, 16, Compression::kNone),
            "out/train-00002-of-00016.tfrecord");
  EXPECT_EQ(shard_path("t", 0, 1, Compression::kGzip), "t-00000-of-00001.tfrecord.gz");
  EXPECT_EQ(shard_path("t", 0, 1, Compression::kZlib), "t-00000-of-00001.tfrecord.zz");
}

TEST(ConvertIdx, DealsImagesRoundRobinIntoShards) {
  testing::TempDir dir;
  IdxFiles files = write_idx_files(dir, 7, 7);
  ShardedTfRecordWriter out(dir.file("fm"), 3, Compression::kGzip);
  std::vector<int64_t> progress;
  convert_idx(files.images, files.labels, out, [&](int64_t done, int64_t total) {
    EXPECT_EQ(total, 7);
    progress.push_back(done);
  });
  out.close();
  EXPECT_EQ(out.records(), 7);
  EXPECT_EQ(progress.size(), 7u);
  std::vector<int64_t> labels_per_shard[3];
  for (int s = 0; s < 3; ++s)
    for (const Example& e : read_examples(out.paths()[size_t(s)]))
      labels_per_shard[s].push_back(e.features.at("label").ints[0]);
  EXPECT_THAT(labels_per_shard[0], ElementsAre(0, 3, 6));
  EXPECT_THAT(labels_per_shard[1], ElementsAre(1, 4));
  EXPECT_THAT(labels_per_shard[2], ElementsAre(2, 5));
}

TEST(ConvertIdx, WritesPixelsAndShape) {
  testing::TempDir dir;
  IdxFiles files = write_idx_files(dir, 5, 5);
  ShardedTfRecordWriter out(dir.file("fm"), 1, Compression::kNone);
  convert_idx(files.images, files.labels, out);
  out.close();
  std::vector<Example> examples = read_examples(out.paths()[0]);
  ASSERT_EQ(examples.size(), 5u);
  const Features& fourth = examples[4].features;
  EXPECT_EQ(fourth.at("image"), bytes_feature({std::string(6, '\x04')}));
  EXPECT_EQ(fourth.at("height"), int64_feature({2}));
  EXPECT_EQ(fourth.at("width"), int64_feature({3}));
  EXPECT_EQ(fourth.at("channels"), int64_feature({1}));
  EXPECT_EQ(fourth.at("label"), int64_feature({4}));
}

TEST(ConvertIdx, ImagesWithoutLabelsHaveNoLabelFeature) {
  testing::TempDir dir;
  IdxFiles files = write_idx_files(dir, 2, 2);
  ShardedTfRecordWriter out(dir.file("u"), 1, Compression::kNone);
  convert_idx(files.images, "", out);
  out.close();
  EXPECT_EQ(read_examples(out.paths()[0])[0].features.count("label"), 0u);
}

TEST(ConvertIdx, MismatchedCountsAndLayoutsNameTheFile) {
  testing::TempDir dir;
  IdxFiles files = write_idx_files(dir, 4, 3);
  ShardedTfRecordWriter out(dir.file("bad"), 1, Compression::kNone);
  try {
    convert_idx(files.images, files.labels, out);
    FAIL() << "converted 4 images with 3 labels";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), files.labels);
    EXPECT_THAT(e.what(), HasSubstr("3 labels for 4 images"));
  }
  // Labels passed as images: rank 1 is not an image array.
  EXPECT_THROW(convert_idx(files.labels, "", out), DataError);
}

TEST(ShardedTfRecordWriter, NeedsAtLeastOneShard) {
  testing::TempDir dir;
  EXPECT_THROW(ShardedTfRecordWriter(dir.file("x"), 0, Compression::kNone), Error);
}

// More shards than the process may open is refused before any file is created.
TEST(ShardedTfRecordWriter, RefusesMoreShardsThanTheOpenFileLimitUpFront) {
  testing::TempDir dir;
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit lowered = saved;
  lowered.rlim_cur = 100;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lowered), 0);
  try {
    ShardedTfRecordWriter out(dir.file("many"), 200, Compression::kNone);
    ADD_FAILURE() << "200 shards accepted under a limit of 100 open files";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("200 shards would be open at once, but this process may "
                                    "open 100 files (ulimit -n); write at most 68 shards"));
  }
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_FALSE(std::filesystem::exists(dir.file("many-00000-of-00200.tfrecord.partial")));
}

}  // namespace
}  // namespace kiln::io
