// The tfrecord dataset: feature specs against real records written by kiln's TFRecord writer.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/data/dataset.h"
#include "kiln/data/loader.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/io/example.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/image_codec.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::data {
namespace tfrecord_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Example i: a 2x3 single-channel image whose pixels are 10*i + position, and label i.
io::Example numbered_example(int64_t i, bool png) {
  io::Image image{2, 3, 1, {}};
  for (int p = 0; p < 6; ++p) image.pixels.push_back(uint8_t(10 * i + p));
  std::string bytes =
      png ? io::encode_png(image) : std::string(image.pixels.begin(), image.pixels.end());
  io::Example example;
  example.features["image"] = io::bytes_feature({bytes});
  example.features["label"] = io::int64_feature({i});
  return example;
}

std::string write_shard(const testing::TempDir& dir, const std::string& name,
                        const std::vector<io::Example>& examples) {
  io::TfRecordWriter writer(dir.file(name), io::Compression::kGzip);
  for (const auto& e : examples) writer.write(io::encode_example(e));
  writer.close();
  return dir.file(name);
}

std::string spec_yaml(const std::string& files, const std::string& image_spec,
                      const std::string& extra = "") {
  return "{type: tfrecord, files: " + files + ", features: {image: " + image_spec +
         ", label: {dtype: int64}}" + extra + "}";
}

TEST(TfRecordDataset, ReadsShardsInOrderAndDeliversChannelsFirst) {
  testing::TempDir dir;
  write_shard(dir, "d-00000-of-00002", {numbered_example(0, false), numbered_example(1, false)});
  write_shard(dir, "d-00001-of-00002", {numbered_example(2, false)});
  auto dataset = make_dataset(
      spec_yaml(dir.file("d-*"), "{shape: [2, 3, 1], channels_first: true, scale: 0.1}"));
  ASSERT_EQ(dataset->size(), 3);
  EXPECT_THAT(dataset->input_shape(), ElementsAre(1, 2, 3));
  Batch batch = dataset->gather(torch::tensor({2, 0}, torch::kInt64));
  EXPECT_TRUE(torch::equal(batch.target, torch::tensor({2, 0}, torch::kInt64)));
  EXPECT_EQ(batch.input.dtype(), torch::kFloat32);
  EXPECT_FLOAT_EQ(batch.input[0][0][1][2].item<float>(), 2.5f);  // (20 + 5) * 0.1
  EXPECT_FLOAT_EQ(batch.input[1][0][0][1].item<float>(), 0.1f);
}

TEST(TfRecordDataset, DecodesPngImages) {
  testing::TempDir dir;
  std::string file = write_shard(dir, "png", {numbered_example(3, true)});
  auto dataset = make_dataset(spec_yaml(file, "{dtype: uint8, shape: [2, 3, 1], encoding: png}"));
  Batch batch = dataset->gather(torch::tensor({0}, torch::kInt64));
  EXPECT_EQ(batch.input.dtype(), torch::kUInt8);
  EXPECT_THAT(batch.input.sizes().vec(), ElementsAre(1, 2, 3, 1));
  EXPECT_EQ(batch.input[0][1][2][0].item<int>(), 35);
  // A server decodes an image for this input as the dataset does: uint8, channels last, unscaled.
  std::optional<io::ImageInput> image = dataset->info().image_input;
  ASSERT_TRUE(image.has_value());
  EXPECT_TRUE(*image == (io::ImageInput{1, 2, 3, false, 1.0}));
}

TEST(TfRecordDataset, AnImageFeatureScaledChannelsFirstGivesItsImageInput) {
  testing::TempDir dir;
  std::string file = write_shard(dir, "png", {numbered_example(3, true)});
  auto scaled = make_dataset(spec_yaml(
      file, "{shape: [2, 3, 1], encoding: png, channels_first: true, scale: 0.00390625}"));
  ASSERT_TRUE(scaled->info().image_input.has_value());
  EXPECT_TRUE(*scaled->info().image_input == (io::ImageInput{1, 2, 3, true, 0.00390625}));
  EXPECT_EQ(scaled->info().image_input->shape(), scaled->input_shape());
  // Raw bytes are no encoded image: nothing to decode.
  std::string raw = write_shard(dir, "raw", {numbered_example(3, false)});
  EXPECT_FALSE(make_dataset(spec_yaml(raw, "{shape: [2, 3, 1]}"))->info().image_input.has_value());
}

// With cache: records a record is decoded when a batch needs it; with cache: decoded, at start.
// Either way the error names the file, the record, its offset and the feature.
TEST(TfRecordDataset, AWrongValueCountNamesFileRecordAndFeature) {
  testing::TempDir dir;
  std::string file =
      write_shard(dir, "d", {numbered_example(0, false), numbered_example(1, false)});
  auto expect_named = [&](const std::function<void()>& step) {
    try {
      step();
      FAIL() << "accepted 6 values for a [28, 28] feature";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), file);
      EXPECT_EQ(e.record(), 1);
      EXPECT_EQ(e.offset(),
                12 + 16 + int64_t(io::encode_example(numbered_example(0, false)).size()));
      EXPECT_THAT(e.what(),
                  HasSubstr("feature \"image\": holds 6 bytes (a bytes_list, read one byte per "
                            "value: encoding raw), its shape [28, 28] needs 784 values"));
    }
  };
  auto lazy = make_dataset(spec_yaml(file, "{shape: [28, 28]}"));
  expect_named([&] { lazy->gather(torch::tensor({1}, torch::kInt64)); });
  try {
    make_dataset(spec_yaml(file, "{shape: [28, 28]}", ", cache: decoded"));
    FAIL() << "decoded a [28, 28] feature from 6 values";
  } catch (const DataError& e) {
    EXPECT_EQ(e.record(), 0);
    EXPECT_EQ(e.offset(), 12);
  }
}

TEST(TfRecordDataset, AMissingFeatureNeedsADefault) {
  testing::TempDir dir;
  io::Example unlabelled = numbered_example(5, false);
  unlabelled.features.erase("label");
  std::string file = write_shard(dir, "d", {numbered_example(4, false), unlabelled});
  auto dataset = make_dataset(spec_yaml(file, "{shape: [6]}"));
  EXPECT_EQ(dataset->gather(torch::tensor({0}, torch::kInt64)).target[0].item<int64_t>(), 4);
  try {
    dataset->gather(torch::tensor({0, 1}, torch::kInt64));
    FAIL() << "accepted a record without its label";
  } catch (const DataError& e) {
    EXPECT_EQ(e.record(), 1);
    EXPECT_THAT(e.what(), HasSubstr("feature \"label\": is missing"));
  }
  std::string with_default =
      "{type: tfrecord, files: " + file +
      ", features: {image: {shape: [6]}, label: {dtype: int64, default: -1}}}";
  auto defaulted = make_dataset(with_default);
  EXPECT_EQ(defaulted->gather(torch::tensor({1}, torch::kInt64)).target[0].item<int64_t>(), -1);
}

TEST(TfRecordDataset, OnCorruptSkipDropsDamagedRecordsAndKeepsTheRest) {
  testing::TempDir dir;
  std::string file = dir.file("d");
  {
    io::TfRecordWriter writer(file);
    for (int i = 0; i < 4; ++i) writer.write(io::encode_example(numbered_example(i, false)));
    writer.close();
  }
  std::string bytes = io::read_file_bytes(file);
  bytes[bytes.size() / 4 + 20] ^= 1;  // inside the data of record 1
  dir.write("d", bytes);
  EXPECT_THROW(make_dataset(spec_yaml(file, "{shape: [6]}")), DataError);
  auto dataset = make_dataset(spec_yaml(file, "{shape: [6]}", ", on_corrupt: skip"));
  ASSERT_EQ(dataset->size(), 3);
  EXPECT_TRUE(torch::equal(dataset->gather(torch::arange(3)).target,
                           torch::tensor({0, 2, 3}, torch::kInt64)));
}

TEST(TfRecordDataset, OnCorruptSkipDropsRecordsThatDoNotMatchTheSpec) {
  testing::TempDir dir;
  io::Example short_image = numbered_example(1, false);
  short_image.features["image"] = io::bytes_feature({"abc"});
  std::string file =
      write_shard(dir, "d", {numbered_example(0, false), short_image, numbered_example(2, false)});
  for (const char* cache : {"records", "decoded"}) {
    auto dataset = make_dataset(spec_yaml(file, "{dtype: uint8, shape: [6]}",
                                          std::string(", on_corrupt: skip, cache: ") + cache));
    ASSERT_EQ(dataset->size(), 2) << cache;
    EXPECT_TRUE(torch::equal(dataset->gather(torch::arange(2)).target,
                             torch::tensor({0, 2}, torch::kInt64)));
  }
}

// The targets of every batch from where the loader stands to the end of its epoch.
std::vector<std::vector<int64_t>> epoch_targets(Loader& loader) {
  std::vector<std::vector<int64_t>> batches;
  while (auto batch = loader.next()) {
    torch::Tensor t = batch->target.contiguous();
    batches.emplace_back(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  }
  return batches;
}

TEST(TfRecordDataset, CacheNoneStreamsEveryRecordOncePerEpochReproducibly) {
  testing::TempDir dir;
  for (int shard = 0; shard < 3; ++shard) {
    std::vector<io::Example> examples;
    for (int i = 0; i < 7; ++i) examples.push_back(numbered_example(shard * 7 + i, false));
    write_shard(dir, "s-" + std::to_string(shard), examples);
  }
  auto dataset = make_dataset(
      spec_yaml(dir.file("s-*"), "{dtype: uint8, shape: [6]}", ", cache: none, shuffle_buffer: 5"));
  ASSERT_NE(dataset->as_streaming(), nullptr);
  EXPECT_EQ(dataset->size(), 21);
  EXPECT_THROW(dataset->gather(torch::arange(2)), InternalError);
  LoaderOptions options{4, true, false, 11};
  Loader serial(dataset, {}, options);
  serial.start_epoch(1);
  auto expected = epoch_targets(serial);
  ASSERT_EQ(expected.size(), 6u);  // 21 = 5 x 4 + 1
  std::vector<int64_t> seen;
  for (const auto& b : expected) seen.insert(seen.end(), b.begin(), b.end());
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 21; ++i) EXPECT_EQ(sorted[static_cast<size_t>(i)], i);
  EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end())) << "the stream was not shuffled";

  options.workers = 3;
  Loader parallel(dataset, {}, options);
  parallel.start_epoch(1);
  EXPECT_EQ(epoch_targets(parallel), expected) << "workers changed the batches";
  parallel.seek({1, 2});  // as a resumed run would
  EXPECT_EQ(epoch_targets(parallel),
            std::vector<std::vector<int64_t>>(expected.begin() + 2, expected.end()));
  parallel.start_epoch(2);
  EXPECT_NE(epoch_targets(parallel), expected) << "epochs 1 and 2 streamed alike";
}

// Training shards of a stream are equal, so 3 ranks of 2 files of 4 and 3 records, or of 1 file of
// 7, take what the fewest hold; evaluation's shards (equal_shards off) are every record once.
TEST(TfRecordDataset, StreamedEvaluationShardsCoverEveryRecordOnce) {
  testing::TempDir dir;
  write_shard(dir, "two-0",
              {numbered_example(0, false), numbered_example(1, false), numbered_example(2, false),
               numbered_example(3, false)});
  write_shard(dir, "two-1",
              {numbered_example(4, false), numbered_example(5, false), numbered_example(6, false)});
  std::vector<io::Example> seven;
  for (int i = 0; i < 7; ++i) seven.push_back(numbered_example(i, false));
  write_shard(dir, "one-0", seven);
  for (const char* files : {"two-*", "one-*"}) {
    auto dataset =
        make_dataset(spec_yaml(dir.file(files), "{dtype: uint8, shape: [6]}", ", cache: none"));
    int world = std::string(files) == "two-*" ? 2 : 3;
    std::vector<int64_t> seen;
    for (bool equal : {true, false}) {
      seen.clear();
      for (int rank = 0; rank < world; ++rank) {
        LoaderOptions options{2, false, false, 1};
        options.rank = rank;
        options.world = world;
        options.equal_shards = equal;
        Loader loader(dataset, {}, options);
        for (const auto& batch : epoch_targets(loader))
          seen.insert(seen.end(), batch.begin(), batch.end());
      }
      std::sort(seen.begin(), seen.end());
      if (equal) {
        EXPECT_EQ(seen.size(), 6u) << files;  // 2 ranks x 3 records, or 3 x 2
      }
    }
    EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6})) << files;
  }
}

// A SequenceExample with context label `label` and a feature list `frames` of `length` steps,
// step t holding [t, t + 0.5] (or `bad_step` holding three values).
std::string sequence_record(int64_t label, int length, int bad_step = -1) {
  io::SequenceExample example;
  example.context["label"] = io::int64_feature({label});
  auto& frames = example.feature_lists["frames"];
  for (int t = 0; t < length; ++t)
    frames.push_back(t == bad_step ? io::float_feature({1, 2, 3})
                                   : io::float_feature({float(t), float(t) + 0.5f}));
  return io::encode_sequence_example(example);
}

std::string sequence_yaml(const std::string& file, const std::string& extra = "") {
  return "{type: tfrecord, files: " + file +
         ", kind: sequence_example, features: {label: {dtype: int64}}, "
         "sequence_features: {frames: {shape: [2]}}, input: frames" +
         extra + "}";
}

TEST(TfRecordDataset, SequenceExampleListsArePaddedOrCutToSteps) {
  testing::TempDir dir;
  std::string file = dir.file("seq");
  {
    io::TfRecordWriter writer(file);
    writer.write(sequence_record(7, 3));
    writer.write(sequence_record(8, 5));
    writer.write(sequence_record(9, 2, 1));
    writer.close();
  }
  for (const char* cache : {"records", "none"}) {
    auto dataset =
        make_dataset(sequence_yaml(file, std::string(", steps: 4, pad: -1, cache: ") + cache));
    EXPECT_THAT(dataset->input_shape(), ElementsAre(4, 2));
    Loader loader(dataset, {}, {2, false, false, 1});
    auto batch = loader.next();
    ASSERT_TRUE(batch.has_value());
    torch::Tensor expected =
        torch::tensor({{{0.0f, 0.5f}, {1.0f, 1.5f}, {2.0f, 2.5f}, {-1.0f, -1.0f}},
                       {{0.0f, 0.5f}, {1.0f, 1.5f}, {2.0f, 2.5f}, {3.0f, 3.5f}}});
    EXPECT_TRUE(torch::equal(batch->input, expected)) << cache << "\n" << batch->input;
    EXPECT_TRUE(torch::equal(batch->target, torch::tensor({7, 8}, torch::kInt64)));
    try {
      loader.next();
      FAIL() << "a step of 3 values passed for shape [2]";
    } catch (const DataError& e) {
      EXPECT_EQ(e.record(), 2);
      EXPECT_THAT(e.what(), HasSubstr("feature \"frames[1]\": holds 3 floats (a float_list), its "
                                      "shape [2] needs 2 values"));
    }
  }
}

TEST(TfRecordDataset, SequenceFeaturesNeedTheSequenceKindAndSteps) {
  testing::TempDir dir;
  std::string file = dir.file("seq");
  EXPECT_THROW(make_dataset(sequence_yaml(file)), ConfigError) << "steps missing";
  std::string as_example = sequence_yaml(file, ", steps: 4");
  as_example.replace(as_example.find("kind: sequence_example"), 22, "kind: example");
  try {
    make_dataset(as_example);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("sequence_features"));
    EXPECT_THAT(e.what(), HasSubstr("kind: sequence_example"));
  }
}

TEST(TfRecordDataset, ConfigMistakesAreReportedBeforeReading) {
  testing::TempDir dir;
  std::string file = write_shard(dir, "d", {numbered_example(0, false)});
  EXPECT_THROW(make_dataset(spec_yaml(dir.file("nothing-*"), "{shape: [6]}")), Error);
  EXPECT_THROW(make_dataset(spec_yaml(file, "{shape: [6], encoding: gif}")), ConfigError);
  EXPECT_THROW(make_dataset(spec_yaml(file, "{shape: [6], channels_first: true}")), ConfigError);
  EXPECT_THROW(make_dataset(spec_yaml(file, "{shape: [6]}", ", cache: disk")), ConfigError);
  try {
    make_dataset(spec_yaml(file, "{shape: [6]}", ", input: pixels"));
    FAIL() << "accepted an undeclared input";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"pixels\""));
  }
}

// `targets:` delivers more features by name beside the target, for a multi_head model's heads,
// with every cache mode.
TEST(TfRecordDataset, NamedTargetsComeWithEveryBatch) {
  testing::TempDir dir;
  std::vector<io::Example> examples;
  for (int64_t i = 0; i < 4; ++i) {
    examples.push_back(numbered_example(i, false));
    examples.back().features["coarse"] = io::int64_feature({i / 2});
    examples.back().features["size"] = io::float_feature({0.5f * float(i)});
  }
  std::string file = write_shard(dir, "t", examples);
  for (const std::string cache : {"records", "decoded", "none"}) {
    SCOPED_TRACE(cache);
    auto dataset = make_dataset(
        "{type: tfrecord, files: " + file +
        ", features: {image: {dtype: uint8, shape: [6]}, label: {dtype: int64}, coarse: {dtype: "
        "int64}, size: {}}, targets: [coarse, size], cache: " +
        cache + "}");
    Loader loader(dataset, {}, LoaderOptions{4, false, false, 1});
    loader.start_epoch(0);
    std::optional<Batch> batch = loader.next();
    ASSERT_TRUE(batch.has_value());
    EXPECT_TRUE(torch::equal(batch->target, torch::tensor({0, 1, 2, 3}, torch::kInt64)));
    ASSERT_EQ(batch->targets.size(), 2u);
    EXPECT_EQ(dataset->info().target_names, (std::vector<std::string>{"coarse", "size"}));
    EXPECT_TRUE(torch::equal(batch->targets.at("coarse").flatten(),
                             torch::tensor({0, 0, 1, 1}, torch::kInt64)));
    EXPECT_TRUE(torch::allclose(batch->targets.at("size").flatten(),
                                torch::tensor({0.0f, 0.5f, 1.0f, 1.5f})));
  }
  try {
    make_dataset(spec_yaml(file, "{shape: [6]}", ", targets: [coarse]"));
    FAIL() << "accepted an undeclared named target";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"coarse\" is not among the declared features"));
  }
  EXPECT_EQ(make_dataset(spec_yaml(file, "{shape: [6]}", ""))->info().target_names.size(), 0u);
  for (const char* clash : {"[input]", "[target]", "[label, label]"}) {
    try {
      make_dataset(spec_yaml(file, "{shape: [6]}", std::string(", targets: ") + clash));
      FAIL() << "accepted targets " << clash;
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr("data.train.targets"));
      EXPECT_THAT(e.what(), HasSubstr("neither \"input\" nor \"target\""));
    }
  }
}

TEST(TfRecordDataset, NamedInputsMakeFeatureColumnRecords) {
  testing::TempDir dir;
  std::string file = write_shard(dir, "t.tfrecord.gz", {numbered_example(0, false)});
  std::string spec = "{type: tfrecord, files: " + file + ", features: {label: {dtype: int64}}, ";
  auto dataset = make_dataset(spec + "inputs: {wide: [image], deep: [x]}}");
  ASSERT_NE(dataset->as_tabular(), nullptr);
  EXPECT_TRUE(dataset->as_tabular()->input_groups().named);
  EXPECT_THAT(dataset->as_tabular()->input_groups().columns(), ElementsAre("image", "x"));
  auto problem_of = [&](const std::string& extra) {
    try {
      make_dataset(spec + extra + "}");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(problem_of("input: [x], inputs: {a: [image]}"),
              AllOf(HasSubstr("data.train.inputs"), HasSubstr("not both")));
  EXPECT_EQ(problem_of("inputs: {a: [image]}, cache: none, on_corrupt: skip"), "accepted");
  EXPECT_THAT(problem_of("inputs: {a: [image]}, kind: sequence_example"),
              AllOf(HasSubstr("data.train.inputs"), HasSubstr("kind: example")));
}

}  // namespace tfrecord_test
}  // namespace kiln::data
