// Damaged TFRecord files: every flipped byte and every truncation point of a small file must give
// a DataError naming the file, the record and the offset where that record starts; never a crash,
// never a silently wrong record.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/tfrecord.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

const std::vector<std::string> kRecords = {"first", "", "the third"};

struct Layout {
  std::string bytes;
  std::vector<size_t> starts;  // offset of each record, then the file size
};

Layout framed_file() {
  Layout layout;
  for (const auto& r : kRecords) {
    layout.starts.push_back(layout.bytes.size());
    layout.bytes += frame_tfrecord(r);
  }
  layout.starts.push_back(layout.bytes.size());
  return layout;
}

// The record whose framing holds byte `offset`.
size_t record_at(const Layout& layout, size_t offset) {
  size_t r = 0;
  while (layout.starts[r + 1] <= offset) ++r;
  return r;
}

// Reads records up to the first error, which must concern record `bad`; returns what came after.
std::vector<std::string> read_expecting_error(const std::string& path, size_t bad,
                                              const Layout& layout, const char* problem) {
  TfRecordReader reader(path, Compression::kNone);
  std::string record;
  for (size_t r = 0; r < bad; ++r) {
    EXPECT_TRUE(reader.next(record));
    EXPECT_EQ(record, kRecords[r]);
  }
  try {
    reader.next(record);
    ADD_FAILURE() << "no error for a damaged record " << bad;
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.record(), static_cast<int64_t>(bad));
    EXPECT_EQ(e.offset(), static_cast<int64_t>(layout.starts[bad]));
    EXPECT_THAT(e.what(), HasSubstr(problem));
  }
  std::vector<std::string> after;
  while (reader.next(record)) after.push_back(record);
  return after;
}

TEST(TfRecordCorruption, EveryFlippedByteIsCaughtInItsRecord) {
  testing::TempDir dir;
  Layout layout = framed_file();
  for (size_t i = 0; i < layout.bytes.size(); ++i) {
    std::string damaged = layout.bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
    std::string path = dir.write("flipped.tfrecord", damaged);
    size_t bad = record_at(layout, i);
    bool in_header = i - layout.starts[bad] < 12;
    SCOPED_TRACE("flipped byte " + std::to_string(i));
    std::vector<std::string> after =
        read_expecting_error(path, bad, layout, in_header ? "length CRC" : "data CRC");
    // A bad data CRC leaves the framing intact, so the following records still read.
    std::vector<std::string> expected_after;
    if (!in_header) expected_after.assign(kRecords.begin() + bad + 1, kRecords.end());
    EXPECT_EQ(after, expected_after);
  }
}

TEST(TfRecordCorruption, EveryTruncationIsReportedOrEndsAtARecordBoundary) {
  testing::TempDir dir;
  Layout layout = framed_file();
  for (size_t cut = 0; cut < layout.bytes.size(); ++cut) {
    std::string path = dir.write("cut.tfrecord", layout.bytes.substr(0, cut));
    SCOPED_TRACE("cut at " + std::to_string(cut));
    size_t r = record_at(layout, cut);
    if (layout.starts[r] == cut) {
      TfRecordReader reader(path, Compression::kNone);
      std::string record;
      size_t count = 0;
      while (reader.next(record)) EXPECT_EQ(record, kRecords[count++]);
      EXPECT_EQ(count, r);
    } else {
      EXPECT_TRUE(read_expecting_error(path, r, layout, "truncated record").empty());
    }
  }
}

TEST(TfRecordCorruption, ATruncatedGzipStreamNamesTheFile) {
  testing::TempDir dir;
  std::string path = dir.file("whole.tfrecord.gz");
  {
    TfRecordWriter writer(path, Compression::kGzip);
    for (const auto& r : kRecords) writer.write(r);
    writer.close();
  }
  std::string whole = read_file_bytes(path);
  for (size_t cut = 1; cut < whole.size(); ++cut) {
    std::string cut_path = dir.write("cut.tfrecord.gz", whole.substr(0, cut));
    try {
      TfRecordReader reader(cut_path, Compression::kGzip);
      std::string record;
      while (reader.next(record)) {
      }
      ADD_FAILURE() << "no error for a gzip stream cut at " << cut;
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), cut_path);
      EXPECT_GE(e.offset(), 0);
    }
  }
}

TEST(TfRecordCorruption, AGarbageFileFailsAtItsFirstRecord) {
  testing::TempDir dir;
  std::string path = dir.write("text.tfrecord", "this is not a TFRecord file at all\n");
  TfRecordReader reader(path);
  std::string record;
  EXPECT_THROW(reader.next(record), DataError);
  EXPECT_FALSE(reader.next(record));  // the framing is lost: nothing more is read
}

}  // namespace
}  // namespace kiln::io
