// Streaming TFRecord epochs: interleaving order, seeded shuffling, sharding by file and by record,
// the epoch length, and damaged or rejected records left out as the scan left them out.

#include "kiln/io/record_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

void write_records(const testing::TempDir& dir, const std::string& name,
                   const std::vector<std::string>& records,
                   Compression compression = Compression::kGzip) {
  TfRecordWriter writer(dir.file(name), compression);
  for (const auto& r : records) writer.write(r);
  writer.close();
}

// Files f0..f(n-1) holding "f<i>r<j>" for j < sizes[i].
std::shared_ptr<const RecordCatalog> files_of_sizes(const testing::TempDir& dir,
                                                    const std::vector<int>& sizes,
                                                    int64_t limit = 0) {
  std::vector<std::string> all;
  for (size_t f = 0; f < sizes.size(); ++f) {
    std::vector<std::string> records;
    for (int r = 0; r < sizes[f]; ++r) records.push_back(fmt::format("f{}r{}", f, r));
    write_records(dir, fmt::format("f{}", f), records);
  }
  RecordStoreOptions options{{dir.file("f*")}};
  options.limit = limit;
  return std::make_shared<RecordCatalog>(RecordCatalog::scan(options));
}

std::vector<std::string> read_all(std::shared_ptr<const RecordCatalog> catalog, EpochPlan plan) {
  if (plan.count == 0) plan.count = catalog->records_per_rank(plan.world);
  RecordStream stream(std::move(catalog), plan);
  std::vector<std::string> out;
  while (auto record = stream.next()) out.push_back(record->bytes);
  return out;
}

EpochPlan in_order(int64_t cycle_length) {
  EpochPlan plan;
  plan.shuffle = false;
  plan.cycle_length = cycle_length;
  return plan;
}

std::vector<std::string> all_records(const std::vector<int>& sizes) {
  std::vector<std::string> out;
  for (size_t f = 0; f < sizes.size(); ++f)
    for (int r = 0; r < sizes[f]; ++r) out.push_back(fmt::format("f{}r{}", f, r));
  return out;
}

TEST(RecordStream, ReadsFilesInTurnCycleLengthAtATime) {
  testing::TempDir dir;
  auto catalog = files_of_sizes(dir, {3, 1, 2});
  EXPECT_EQ(catalog->size(), 6);
  EXPECT_THAT(read_all(catalog, in_order(1)),
              ElementsAre("f0r0", "f0r1", "f0r2", "f1r0", "f2r0", "f2r1"));
  // f1 ends after one record and f2 takes its place.
  EXPECT_THAT(read_all(catalog, in_order(2)),
              ElementsAre("f0r0", "f1r0", "f0r1", "f2r0", "f0r2", "f2r1"));
}

TEST(RecordStream, ShufflesReproduciblyPerEpoch) {
  testing::TempDir dir;
  std::vector<int> sizes = {40, 30, 50, 20};
  auto catalog = files_of_sizes(dir, sizes);
  EpochPlan plan;
  plan.buffer = 16;
  plan.seed = 4;
  std::vector<std::string> first = read_all(catalog, plan);
  EXPECT_THAT(first, UnorderedElementsAreArray(all_records(sizes)));
  EXPECT_EQ(read_all(catalog, plan), first) << "the same epoch must stream the same way";
  EXPECT_NE(first, read_all(catalog, in_order(4)));
  plan.epoch = 1;
  EXPECT_NE(read_all(catalog, plan), first) << "epochs must differ";
  plan.epoch = 0;
  plan.seed = 5;
  EXPECT_NE(read_all(catalog, plan), first) << "seeds must differ";
}

TEST(RecordStream, ABufferOfOneShufflesOnlyTheFileOrder) {
  testing::TempDir dir;
  auto catalog = files_of_sizes(dir, {2, 2, 2, 2});
  EpochPlan plan;
  plan.buffer = 1;
  plan.cycle_length = 1;
  std::vector<std::string> order = read_all(catalog, plan);
  for (size_t i = 0; i < order.size(); i += 2) {
    EXPECT_EQ(order[i].substr(0, 2), order[i + 1].substr(0, 2)) << "files were split";
    EXPECT_EQ(order[i].substr(2), "r0");
  }
}

TEST(RecordStream, ShardsByFileWhenThereAreEnoughFiles) {
  testing::TempDir dir;
  std::vector<int> sizes = {5, 5, 5, 5};
  auto catalog = files_of_sizes(dir, sizes);
  EpochPlan plan;
  plan.world = 2;
  std::vector<std::string> all;
  for (plan.rank = 0; plan.rank < 2; ++plan.rank) {
    std::vector<std::string> part = read_all(catalog, plan);
    EXPECT_EQ(part.size(), 10u);
    for (const auto& r : part)
      EXPECT_EQ((r[1] - '0') % 2, plan.rank) << r << " is not in one of rank's files";
    all.insert(all.end(), part.begin(), part.end());
  }
  EXPECT_THAT(all, UnorderedElementsAreArray(all_records(sizes)));
}

TEST(RecordStream, ShardsByRecordWhenFilesAreFewerThanRanksAndEqualisesEpochs) {
  testing::TempDir dir;
  std::vector<int> sizes = {6, 5};  // 11 records over 3 ranks: 4, 4, 3
  auto catalog = files_of_sizes(dir, sizes);
  EXPECT_EQ(catalog->records_for(0, 3), 4);
  EXPECT_EQ(catalog->records_for(2, 3), 3);
  EXPECT_EQ(catalog->records_per_rank(3), 3);
  std::vector<std::string> all;
  EpochPlan plan;
  plan.world = 3;
  for (plan.rank = 0; plan.rank < 3; ++plan.rank) {
    plan.count = catalog->records_for(plan.rank, 3);  // every record, to check the partition
    std::vector<std::string> part = read_all(catalog, plan);
    EXPECT_EQ(static_cast<int64_t>(part.size()), plan.count);
    all.insert(all.end(), part.begin(), part.end());
  }
  EXPECT_THAT(all, UnorderedElementsAreArray(all_records(sizes)));
  plan.rank = 0;
  plan.count = 3;
  EXPECT_EQ(read_all(catalog, plan).size(), 3u) << "an epoch stops at count";
}

TEST(RecordStream, KeepsToTheCatalogsLimit) {
  testing::TempDir dir;
  auto catalog = files_of_sizes(dir, {3, 3}, 4);
  EXPECT_EQ(catalog->size(), 4);
  EpochPlan plan;
  plan.buffer = 8;
  EXPECT_THAT(read_all(catalog, plan), UnorderedElementsAreArray({"f0r0", "f0r1", "f0r2", "f1r0"}));
}

TEST(RecordStream, LeavesOutWhatTheScanSkipped) {
  testing::TempDir dir;
  write_records(dir, "f0", {"keep0", "damaged", "reject", "keep3"}, Compression::kNone);
  std::string bytes = read_file_bytes(dir.file("f0"));
  bytes[bytes.find("damaged")] ^= 0x20;  // breaks that record's data CRC
  dir.write("f0", bytes);
  auto reject = [](std::string_view record, const RecordLocation& where) {
    if (record == "reject") throw DataError(where.file, where.record, where.offset, "rejected");
  };
  RecordStoreOptions options{{dir.file("f0")}};
  EXPECT_THROW(RecordCatalog::scan(options, reject), DataError);
  options.skip_corrupt = true;
  auto catalog = std::make_shared<RecordCatalog>(RecordCatalog::scan(options, reject));
  EXPECT_EQ(catalog->size(), 2);
  EpochPlan plan = in_order(1);
  plan.count = 2;
  RecordStream stream(catalog, plan);
  auto first = stream.next();
  auto second = stream.next();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->bytes, "keep0");
  EXPECT_EQ(second->bytes, "keep3");
  EXPECT_EQ(second->where.record, 3);
  EXPECT_FALSE(stream.next().has_value());
}

}  // namespace
}  // namespace kiln::io
