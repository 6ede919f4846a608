// Whole-file reads are bounded before any byte is read: a path that is not a regular file (a link
// to /dev/zero, a FIFO no one writes, a folder) is refused at once, and so is a file larger than
// the caller's limit.

#include "kiln/core/text_file.h"

#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace text_file_test {

using ::testing::HasSubstr;

std::string error_of(const std::string& path, size_t max_bytes = kMaxTextFileBytes) {
  try {
    read_text_file(path, max_bytes);
    return "no error";
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(TextFile, ReadsARegularFileWhole) {
  testing::TempDir dir;
  const std::string content("a\0b\nlast line without newline", 29);
  EXPECT_EQ(read_text_file(dir.write("f.txt", content)), content);
  EXPECT_EQ(read_text_file(dir.write("empty.txt", "")), "");
  EXPECT_EQ(read_text_line(dir.write("pid", "1234 \n")), "1234");
}

TEST(TextFile, ALinkToADeviceIsRefusedBeforeReading) {
  testing::TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.file("model.yaml"));
  EXPECT_THAT(error_of(dir.file("model.yaml")),
              HasSubstr(dir.file("model.yaml") + ": is not a regular file"));
  EXPECT_THAT(error_of("/dev/null"), HasSubstr("is not a regular file"));
}

TEST(TextFile, AFifoWithNoWriterIsRefusedWithoutWaiting) {
  testing::TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_THAT(error_of(dir.file("fifo")), HasSubstr("is not a regular file"));
}

TEST(TextFile, AFolderIsRefusedSayingSo) {
  testing::TempDir dir;
  std::filesystem::create_directory(dir.file("run.json"));
  EXPECT_THAT(error_of(dir.file("run.json")), HasSubstr("run.json: is a folder, not a file"));
  EXPECT_THROW(read_text_file_if_any(dir.file("run.json")), DataError);
}

TEST(TextFile, AFileOverTheLimitIsRefusedNamingBothSizes) {
  testing::TempDir dir;
  std::string path = dir.write("big.json", std::string(101, 'x'));
  EXPECT_THAT(error_of(path, 100), HasSubstr("is 101 bytes, more than the 100 kiln reads"));
  EXPECT_EQ(error_of(path, 101), "no error");
}

TEST(TextFile, IfAnyIsEmptyOnlyWhenTheFileIsNotThere) {
  testing::TempDir dir;
  EXPECT_FALSE(read_text_file_if_any(dir.file("missing.json")));
  EXPECT_FALSE(read_text_file_if_any(dir.write("plain", "x") + "/below"));
  EXPECT_EQ(read_text_file_if_any(dir.write("there", "x")).value(), "x");
  EXPECT_THROW(read_text_file(dir.file("missing.json")), IoError);
}

TEST(TextFile, APartIsReadFromAnOffsetOrFromTheEnd) {
  testing::TempDir dir;
  std::string path = dir.write("metrics.csv", "0123456789");
  FilePart middle = read_file_part(path, 4).value();
  EXPECT_EQ(middle.bytes, "456789");
  EXPECT_EQ(middle.from, 4);
  EXPECT_EQ(middle.size, 10);
  FilePart tail = read_file_part(path, -3).value();
  EXPECT_EQ(tail.bytes, "789");
  EXPECT_EQ(tail.from, 7);
  EXPECT_EQ(read_file_part(path, -30)->bytes, "0123456789");
  EXPECT_EQ(read_file_part(path, 30)->bytes, "");
  EXPECT_EQ(read_file_part(path, 2, 3)->bytes, "234");
  EXPECT_FALSE(read_file_part(dir.file("none.csv"), 0));
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_THROW(read_file_part(dir.file("fifo"), -10), DataError);  // and returns at once
}

}  // namespace text_file_test
}  // namespace kiln
