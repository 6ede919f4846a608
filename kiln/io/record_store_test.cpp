// The in-memory record cache: order across shards, where each record came from, the limit, and
// the skip policy for damaged records and records a check rejects.

#include "kiln/io/record_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

std::string write_records(const testing::TempDir& dir, const std::string& name,
                          const std::vector<std::string>& records,
                          Compression compression = Compression::kNone) {
  TfRecordWriter writer(dir.file(name), compression);
  for (const auto& r : records) writer.write(r);
  writer.close();
  return dir.file(name);
}

TEST(RecordStore, KeepsRecordsOfAllShardsInOrderWithTheirOrigins) {
  testing::TempDir dir;
  write_records(dir, "s-00001", {"c"}, Compression::kGzip);
  std::string first = write_records(dir, "s-00000", {"a", "bb"});
  RecordStore store = RecordStore::read({{dir.file("s-*")}});
  ASSERT_EQ(store.size(), 3);
  EXPECT_EQ(store.bytes(0), "a");
  EXPECT_EQ(store.bytes(1), "bb");
  EXPECT_EQ(store.bytes(2), "c");
  RecordLocation second = store.location(1);
  EXPECT_EQ(second.file, first);
  EXPECT_EQ(second.record, 1);
  EXPECT_EQ(second.offset, 12 + 1 + 4 + 12);  // after record 0 (header, 1 byte, footer)
  EXPECT_EQ(store.location(2).record, 0);
  EXPECT_EQ(RecordStore::read({{dir.file("s-*")}, "auto", false, 2}).size(), 2);
}

TEST(RecordStore, SkipsDamagedAndRejectedRecordsWhenAskedAndCountsThem) {
  testing::TempDir dir;
  std::string file = write_records(dir, "d", {"good0", "bad!!", "good2", "good3"});
  std::string bytes = read_file_bytes(file);
  bytes[12 + 5 + 4 + 12 + 2] ^= 0x20;  // inside the data of record 1
  dir.write("d", bytes);
  EXPECT_THROW(RecordStore::read({{file}}), DataError);

  auto reject_good3 = [](std::string_view record, const RecordLocation& at) {
    if (record == "good3") throw DataError(at.file, at.record, at.offset, "rejected");
  };
  RecordStore store = RecordStore::read({{file}, "none", true, 0}, reject_good3);
  ASSERT_EQ(store.size(), 2);
  EXPECT_EQ(store.bytes(1), "good2");
  EXPECT_EQ(store.location(1).record, 2);
  EXPECT_EQ(store.skipped(), 2);
  EXPECT_THAT(store.first_problem(), HasSubstr("data CRC mismatch"));
  EXPECT_THAT(store.first_problem(), HasSubstr("record 1"));
}

// A damaged length field loses the framing: the records after it are found again by their CRCs,
// and the report counts the bytes passed over, not only the one record.
TEST(RecordStore, ADamagedLengthSkipsOnlyItsRecordAndCountsItsBytes) {
  testing::TempDir dir;
  std::vector<std::string> records;
  for (int i = 0; i < 50; ++i) records.push_back("record " + std::to_string(i));
  std::string file = write_records(dir, "l", records);
  std::string bytes = read_file_bytes(file);
  size_t frame = 12 + records[0].size() + 4;
  bytes[3 * frame + 1] ^= 0x01;  // record 3's length
  dir.write("l", bytes);
  EXPECT_THROW(RecordStore::read({{file}}), DataError);

  RecordStore store = RecordStore::read({{file}, "none", true, 0});
  EXPECT_EQ(store.size(), 49);
  EXPECT_EQ(store.skipped(), 1);
  EXPECT_EQ(store.skipped_bytes(), static_cast<int64_t>(frame));
  EXPECT_EQ(store.bytes(3), "record 4");
  EXPECT_EQ(store.location(3).record, 4);
  EXPECT_THAT(store.first_problem(), HasSubstr("bytes passed over to the next intact record"));
}

TEST(RecordStore, NamesAPatternThatMatchesNothingAndRefusesEmptyFiles) {
  testing::TempDir dir;
  try {
    RecordStore::read({{dir.file("none-*")}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("none-*"));
  }
  std::string empty = write_records(dir, "empty", {});
  EXPECT_THROW(RecordStore::read({{empty}}), Error);
}

}  // namespace
}  // namespace kiln::io
