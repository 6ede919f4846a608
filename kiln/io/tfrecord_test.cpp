#include "kiln/io/tfrecord.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/io/file_bytes.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
namespace fs = std::filesystem;

const std::string kTestdata = KILN_TESTDATA;

std::vector<std::string> read_all(TfRecordReader& reader) {
  std::vector<std::string> records;
  std::string record;
  while (reader.next(record)) records.push_back(record);
  return records;
}

std::vector<std::string> read_all(const std::string& path) {
  TfRecordReader reader(path);
  return read_all(reader);
}

Json expected_json(const std::string& name) {
  return Json::parse(read_file_bytes(kTestdata + "/" + name + ".expected.json"));
}

// Records of several sizes: empty, one byte, a two-byte length, and more than one read chunk.
std::vector<std::string> sample_records() {
  std::vector<std::string> records = {"", "x", std::string(300, 'a'), std::string(70000, '\0')};
  for (size_t i = 0; i < records[3].size(); ++i) records[3][i] = static_cast<char>(i * 7);
  return records;
}

std::string write_records(const std::string& path, const std::vector<std::string>& records,
                          Compression compression = Compression::kNone) {
  TfRecordWriter writer(path, compression);
  for (const auto& r : records) writer.write(r);
  writer.close();
  return path;
}

TEST(TfRecordFraming, MatchesTheKnownHeaders) {
  // docs/formats.md §1.1: lengths 0x57, 24 and 50 and their masked CRCs.
  EXPECT_EQ(frame_tfrecord(std::string(0x57, 'x')).substr(0, 12),
            std::string("\x57\0\0\0\0\0\0\0\xe6\xba\x94\x8c", 12));
  EXPECT_EQ(frame_tfrecord(std::string(24, 'x')).substr(8, 4), "\xa3\x7f\x4b\x22");
  EXPECT_EQ(frame_tfrecord(std::string(50, 'x')).substr(8, 4), "\x24\x19\x56\xec");
  EXPECT_EQ(frame_tfrecord("abc").size(), 12u + 3 + 4);
}

TEST(TfRecordReader, ReadsTheTensorFlowTutorialFile) {
  Json expected = expected_json("tfrecord_lite_test.tfrecord");
  TfRecordReader reader(kTestdata + "/tfrecord_lite_test.tfrecord");
  EXPECT_EQ(reader.compression(), Compression::kNone);
  std::vector<std::string> records = read_all(reader);
  ASSERT_EQ(records.size(), expected["num_records"].get<size_t>());
  EXPECT_EQ(records[0].size(), expected["first_record_length"].get<size_t>());
  EXPECT_EQ(records[0].substr(0, 4), "\x0a\x55\x0a\x17");  // Example.features, first entry
  EXPECT_EQ(reader.offset(), expected["decompressed_bytes"].get<int64_t>());
}

TEST(TfRecordReader, DetectsAndReadsTheGzippedTfxFile) {
  Json expected = expected_json("tfx_penguin_train.tfrecord.gz");
  TfRecordReader reader(kTestdata + "/tfx_penguin_train.tfrecord.gz");
  EXPECT_EQ(reader.compression(), Compression::kGzip);
  std::vector<std::string> records = read_all(reader);
  ASSERT_EQ(records.size(), expected["num_records"].get<size_t>());
  EXPECT_EQ(records[0].size(), expected["first_record_length"].get<size_t>());
  EXPECT_EQ(reader.offset(), expected["decompressed_bytes"].get<int64_t>());
}

TEST(TfRecordWriter, RoundTripsEveryCompression) {
  testing::TempDir dir;
  for (Compression c : {Compression::kNone, Compression::kGzip, Compression::kZlib}) {
    std::string path = write_records(dir.file(compression_name(c)), sample_records(), c);
    EXPECT_EQ(detect_file_compression(path), c) << compression_name(c);
    EXPECT_EQ(read_all(path), sample_records()) << compression_name(c);
    TfRecordReader explicit_reader(path, c);
    EXPECT_EQ(read_all(explicit_reader), sample_records()) << compression_name(c);
  }
  EXPECT_TRUE(read_all(write_records(dir.file("empty"), {})).empty());
}

TEST(TfRecordWriter, CountsRecordsAndBytes) {
  testing::TempDir dir;
  TfRecordWriter writer(dir.file("out"), Compression::kGzip);
  writer.write("abc");
  writer.write("");
  EXPECT_EQ(writer.records(), 2);
  EXPECT_EQ(writer.bytes(), (16 + 3) + 16);
  writer.close();
}

TEST(TfRecordWriter, TheFinalNameAppearsOnlyWhenClosed) {
  testing::TempDir dir;
  std::string path = dir.file("data.tfrecord");
  {
    TfRecordWriter writer(path);
    writer.write("record");
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::exists(path + ".partial"));
  }
  EXPECT_FALSE(fs::exists(path));  // abandoned without close(): nothing left behind
  EXPECT_FALSE(fs::exists(path + ".partial"));
  write_records(path, {"record"});
  EXPECT_TRUE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".partial"));
}

TEST(Compression, DetectionIsNotFooledByALengthThatLooksLikeZlib) {
  // A first record of 376 bytes starts 78 01: a valid zlib header.
  testing::TempDir dir;
  std::string path = write_records(dir.file("raw"), {std::string(376, 'z')});
  EXPECT_EQ(read_file_bytes(path).substr(0, 2), "\x78\x01");
  EXPECT_EQ(detect_file_compression(path), Compression::kNone);
  EXPECT_EQ(read_all(path).size(), 1u);
}

TEST(Compression, ParsesNamesAndListsTheValidOnes) {
  EXPECT_EQ(parse_compression("gzip"), Compression::kGzip);
  EXPECT_EQ(parse_compression("zlib"), Compression::kZlib);
  EXPECT_EQ(parse_compression("none"), Compression::kNone);
  try {
    parse_compression("GZIP2");
    FAIL() << "accepted GZIP2";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("none, gzip, zlib"));
  }
}

TEST(TfRecordReader, AMissingFileIsAnIoError) {
  EXPECT_THROW(TfRecordReader("/nonexistent/file.tfrecord"), IoError);
}

// A FIFO given as a record file held every reader in open() until some writer came, and a
// device was read without end: each is refused at once, by name, for any compression.
TEST(TfRecordReader, AFifoADeviceOrAFolderIsRefusedAtOnceByName) {
  kiln::testing::TempDir dir;
  std::string fifo = dir.file("train.tfrecord");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (std::optional<Compression> compression :
       {std::optional<Compression>(), std::optional<Compression>(Compression::kNone),
        std::optional<Compression>(Compression::kGzip)}) {
    EXPECT_THAT([&] { TfRecordReader reader(fifo, compression); },
                ThrowsMessage<DataError>(AllOf(HasSubstr(fifo), HasSubstr("not a regular file"))));
  }
  EXPECT_THAT([&] { TfRecordReader reader("/dev/zero"); },
              ThrowsMessage<DataError>(HasSubstr("/dev/zero")));
  EXPECT_THAT([&] { TfRecordReader reader(dir.path()); },
              ThrowsMessage<DataError>(HasSubstr("is a folder")));
}

}  // namespace
}  // namespace kiln::io
