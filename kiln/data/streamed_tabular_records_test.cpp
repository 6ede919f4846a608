// Feature columns over streamed tf.Example records (tfrecord with cache: none): the columns fit
// on the files read in order, in parts handed out by one reader to the pass's threads, to what
// the same records held in memory give; each epoch's streamed batches carry the rows the held
// records give; a bad value stops the pass naming its file, record and feature.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/data/columns_dataset.h"
#include "kiln/data/dataset.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/io/example.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::data {
namespace streamed_tabular_records_test {

using ::testing::AllOf;
using ::testing::HasSubstr;

// Record i: x = i / 7 (the string "tall" where `bad(i)`), a color out of four, label i % 3;
// shards of `per_shard` records.
void write_shards(
    const testing::TempDir& dir, int64_t records, int64_t per_shard,
    const std::function<bool(int64_t)>& bad = [](int64_t) { return false; }) {
  const char* colors[] = {"red", "green", "blue", "plum"};
  for (int64_t first = 0, shard = 0; first < records; first += per_shard, ++shard) {
    io::TfRecordWriter writer(dir.file("rows-" + std::to_string(shard) + ".tfrecord.gz"),
                              io::Compression::kGzip);
    for (int64_t i = first; i < std::min(records, first + per_shard); ++i) {
      io::Example example;
      example.features["x"] =
          bad(i) ? io::bytes_feature({"tall"}) : io::float_feature({float(i) / 7});
      example.features["color"] = io::bytes_feature({colors[(i * i) % 4]});
      example.features["label"] = io::int64_feature({i % 3});
      writer.write(io::encode_example(example));
    }
    writer.close();
  }
}

std::shared_ptr<Dataset> rows(const testing::TempDir& dir, const std::string& cache,
                              const std::string& extra = "") {
  return make_dataset("{type: tfrecord, files: " + dir.file("rows-*") +
                      ", features: {label: {dtype: int64}}, input: [x, color], cache: " + cache +
                      ", shuffle_buffer: 1, cycle_length: 1" + extra + "}");
}

std::shared_ptr<tabular::FeatureColumns> fitted(const Dataset& records, int64_t threads) {
  ComponentMap declared("column");
  OptionTraits<ComponentMap>::read(
      Json{{"x", {{"type", "numeric"}, {"normalize", "zscore"}}}, {"color", "categorical"}},
      declared, ReadContext{"data.columns", nullptr});
  auto columns = std::make_shared<tabular::FeatureColumns>(
      declared, tabular::InputGroups{"x", "color"}, "data.train.input", "data.columns");
  columns->fit(records.as_tabular()->records(), threads, records.as_tabular()->skips_corrupt());
  return columns;
}

// Every record of one epoch streamed in file order, decoded in batches of 512 and concatenated.
Batch stream_epoch(const StreamingDataset& stream, int64_t records) {
  io::EpochPlan plan;
  plan.shuffle = false;
  plan.count = records;
  std::unique_ptr<io::RecordStream> epoch = stream.open(plan);
  std::vector<torch::Tensor> inputs, targets;
  while (true) {
    std::vector<io::Record> batch;
    while (batch.size() < 512)
      if (auto record = epoch->next())
        batch.push_back(std::move(*record));
      else
        break;
    if (batch.empty()) break;
    Batch decoded = stream.decode(batch);
    inputs.push_back(decoded.input);
    targets.push_back(decoded.target);
  }
  return {torch::cat(inputs), torch::cat(targets), {}, {}};
}

TEST(StreamedTabularRecords, ColumnsFitOnTheStreamedFilesAsOnTheHeldRecords) {
  testing::TempDir dir;
  write_shards(dir, 40000, 15000);  // three parts of a pass, across three files
  auto held = rows(dir, "records"), streamed = rows(dir, "none");
  ASSERT_NE(streamed->as_streaming(), nullptr);
  ASSERT_NE(streamed->as_tabular(), nullptr);
  EXPECT_EQ(streamed->size(), 40000);
  Json expected = fitted(*held, 1)->preprocessing();
  EXPECT_EQ(fitted(*streamed, 2)->preprocessing(), expected);
  EXPECT_EQ(fitted(*streamed, 1)->preprocessing(), expected);  // a second pass starts over
}

TEST(StreamedTabularRecords, StreamedBatchesCarryTheRowsOfTheHeldRecords) {
  testing::TempDir dir;
  write_shards(dir, 3000, 1000);
  auto held = rows(dir, "records");
  std::shared_ptr<const tabular::FeatureColumns> columns = fitted(*held, 2);
  ColumnsDataset written_held(held, columns);
  ColumnsDataset written_streamed(rows(dir, "none"), columns);
  EXPECT_EQ(written_held.as_streaming(), nullptr);
  const StreamingDataset* stream = written_streamed.as_streaming();
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(stream->input_shape(), std::vector<int64_t>{columns->width()});
  EXPECT_EQ(stream->examples_per_epoch(1), 3000);
  Batch streamed = stream_epoch(*stream, 3000);
  Batch all = written_held.gather(torch::arange(3000, torch::kInt64));
  EXPECT_TRUE(torch::equal(streamed.input, all.input));
  EXPECT_TRUE(torch::equal(streamed.target, all.target));
  // Each row says where it came from.
  io::EpochPlan plan;
  plan.shuffle = false;
  plan.count = 1;
  io::Record first = *stream->open(plan)->next();
  EXPECT_EQ(stream->decode({first}).origin(0).where.record, 0);
}

TEST(StreamedTabularRecords, OnCorruptSkipDropsTheRefusedRowsFromTheFitAndFromEveryBatch) {
  testing::TempDir dir;
  auto bad = [](int64_t i) { return i % 997 == 5; };
  write_shards(dir, 40000, 15000, bad);
  auto held = rows(dir, "records", ", on_corrupt: skip"),
       streamed = rows(dir, "none", ", on_corrupt: skip");
  std::shared_ptr<const tabular::FeatureColumns> columns = fitted(*held, 1);
  EXPECT_EQ(fitted(*streamed, 2)->preprocessing(), columns->preprocessing());
  auto written_held = std::make_shared<ColumnsDataset>(held, columns, 2);
  ColumnsDataset written_streamed(streamed, columns, 2);
  EXPECT_EQ(written_streamed.refused_rows(), written_held->refused_rows());
  EXPECT_EQ(written_streamed.skipped_records().count, 41);
  Batch all = stream_epoch(*written_streamed.as_streaming(), 40000);
  auto kept = without_refused(written_held);
  Batch expected = kept->gather(torch::arange(kept->size(), torch::kInt64));
  ASSERT_EQ(all.input.size(0), 40000 - 41);
  EXPECT_TRUE(torch::equal(all.input, expected.input));
  EXPECT_TRUE(torch::equal(all.target, expected.target));
}

TEST(StreamedTabularRecords, ABadValueStopsThePassNamingFileRecordAndFeature) {
  testing::TempDir dir;
  io::TfRecordWriter writer(dir.file("rows-0.tfrecord.gz"), io::Compression::kGzip);
  for (int i = 0; i < 3; ++i) {
    io::Example example;
    example.features["x"] = i == 2 ? io::bytes_feature({"tall"}) : io::float_feature({float(i)});
    example.features["color"] = io::bytes_feature({"red"});
    example.features["label"] = io::int64_feature({0});
    writer.write(io::encode_example(example));
  }
  writer.close();
  auto streamed = rows(dir, "none");
  EXPECT_THAT([&] { fitted(*streamed, 2); },
              ::testing::ThrowsMessage<DataError>(
                  AllOf(HasSubstr("rows-0.tfrecord.gz, record 2"), HasSubstr("feature \"x\""))));
}

}  // namespace streamed_tabular_records_test
}  // namespace kiln::data
