// Damaged TFRecord files: every flipped byte and every truncation point of a small file must give
// a DataError naming the file, the record and the offset where that record starts; never a crash,
// never a silently wrong record.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kiln/core/crc32c.h"
#include "kiln/core/error.h"
#include "kiln/io/byte_stream.h"
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

// Calls `check(path, i, bad)` for a copy of the file with byte i flipped, for every i; `bad` is
// the record whose framing holds byte i.
template <class Check>
void for_every_flipped_byte(const Layout& layout, Check check) {
  testing::TempDir dir;
  for (size_t i = 0; i < layout.bytes.size(); ++i) {
    std::string damaged = layout.bytes;
    damaged[i] = static_cast<char>(damaged[i] ^ 0x5a);
    SCOPED_TRACE("flipped byte " + std::to_string(i));
    check(dir.write("flipped.tfrecord", damaged), i, record_at(layout, i));
  }
}

TEST(TfRecordCorruption, EveryFlippedByteIsCaughtInItsRecord) {
  Layout layout = framed_file();
  for_every_flipped_byte(layout, [&](const std::string& path, size_t i, size_t bad) {
    bool in_header = i - layout.starts[bad] < 12;
    std::vector<std::string> after =
        read_expecting_error(path, bad, layout, in_header ? "length CRC" : "data CRC");
    // A bad data CRC leaves the framing intact, so the following records still read.
    std::vector<std::string> expected_after;
    if (!in_header) expected_after.assign(kRecords.begin() + bad + 1, kRecords.end());
    EXPECT_EQ(after, expected_after);
  });
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

// Resynchronizing (on_corrupt: skip): after any damaged byte, every later record is read again.
TEST(TfRecordCorruption, AResynchronizingReaderLosesOnlyTheDamagedRecord) {
  Layout layout = framed_file();
  for_every_flipped_byte(layout, [&](const std::string& path, size_t, size_t bad) {
    TfRecordReader reader(path, Compression::kNone);
    reader.resynchronize_after_damage();
    std::vector<std::string> read;
    std::string record;
    int errors = 0;
    for (;;) {
      try {
        if (!reader.next(record)) break;
        read.push_back(record);
      } catch (const DataError& e) {
        errors += 1;
        EXPECT_EQ(e.record(), static_cast<int64_t>(bad));
      }
    }
    std::vector<std::string> expected = kRecords;
    expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(bad));
    EXPECT_EQ(read, expected);
    EXPECT_EQ(errors, 1);
    EXPECT_EQ(reader.damaged_bytes(),
              static_cast<int64_t>(layout.starts[bad + 1] - layout.starts[bad]));
  });
}

// A header whose length field is 2^64 - 1 and whose length CRC is right.
std::string huge_length_header() {
  std::string header(8, static_cast<char>(0xff));
  uint32_t crc = crc32c_mask(crc32c(header.data(), 8));
  for (int i = 0; i < 4; ++i) header += static_cast<char>((crc >> (8 * i)) & 0xff);
  return header;
}

// A length of 2^64 - 1 with a valid CRC must not wrap around into a tiny read.
TEST(TfRecordCorruption, AHugeLengthWithAValidCrcIsReportedPlainAndGzipped) {
  testing::TempDir dir;
  std::string framed = frame_tfrecord("x");
  for (auto compression : {Compression::kNone, Compression::kGzip}) {
    std::string path = dir.file(std::string("huge.tfrecord.") + compression_name(compression));
    auto out = open_output(path, compression);
    std::string bytes = huge_length_header() + framed;
    out->write(bytes.data(), bytes.size());
    out->close();
    TfRecordReader reader(path, compression);
    std::string record;
    try {
      reader.next(record);
      ADD_FAILURE() << "no error for a length of 2^64 - 1";
    } catch (const DataError& e) {
      EXPECT_EQ(e.record(), 0);
      EXPECT_THAT(e.what(), HasSubstr("18446744073709551615 bytes, more than a record may hold"));
    }
    EXPECT_FALSE(reader.next(record));
  }
}

std::string gzipped_records(const testing::TempDir& dir) {
  std::string path = dir.file("whole.tfrecord.gz");
  TfRecordWriter writer(path, Compression::kGzip);
  for (int i = 0; i < 2000; ++i) writer.write("record number " + std::to_string(i * 7919));
  writer.close();
  return read_file_bytes(path);
}

// Reads with resynchronization, as on_corrupt: skip does; returns the errors seen. Must end.
int errors_reading_to_the_end(const std::string& path) {
  TfRecordReader reader(path, Compression::kGzip);
  reader.resynchronize_after_damage();
  std::string record;
  int errors = 0;
  for (int calls = 0; calls < 10000; ++calls) {
    try {
      if (!reader.next(record)) return errors;
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), path);
      errors += 1;
    }
  }
  ADD_FAILURE() << "the reader never reached the end";
  return errors;
}

TEST(TfRecordCorruption, ADamagedGzipStreamEndsTheFileEvenWhenSkipping) {
  testing::TempDir dir;
  std::string whole = gzipped_records(dir);
  EXPECT_EQ(errors_reading_to_the_end(dir.write("half.gz", whole.substr(0, whole.size() / 2))), 1);
  std::string trailer = whole;
  trailer[trailer.size() - 6] ^= 0x40;  // the CRC-32 of the gzip trailer
  EXPECT_EQ(errors_reading_to_the_end(dir.write("trailer.gz", trailer)), 1);
  std::string middle = whole;
  middle[middle.size() / 2] ^= 0xff;
  EXPECT_GE(errors_reading_to_the_end(dir.write("middle.gz", middle)), 1);
}

TEST(TfRecordCorruption, AStrayByteAfterACompleteGzipStreamIsNamedAsSuch) {
  testing::TempDir dir;
  std::string whole = gzipped_records(dir);
  std::string path = dir.write("stray.gz", whole + "x");
  TfRecordReader reader(path, Compression::kGzip);
  std::string record;
  int64_t records = 0;
  try {
    while (reader.next(record)) records += 1;
    ADD_FAILURE() << "a stray byte after the stream went unnoticed";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("1 more bytes follow that are not another compressed stream"));
    EXPECT_EQ(e.offset(), static_cast<int64_t>(whole.size()));
  }
  EXPECT_EQ(records, 2000);
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
