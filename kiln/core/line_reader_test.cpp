// LineReader: lines as written (CRLF kept for the caller, a last line without a newline, lines
// longer than one read), and what it refuses by name: a line over the bound (a file of zeros
// without a newline), a FIFO, a device and a folder.

#include "kiln/core/line_reader.h"

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace line_reader_test {

using ::testing::HasSubstr;

std::vector<std::string> all_lines(const std::string& path, size_t max = 1 << 20) {
  LineReader reader(path, max);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) {
    lines.push_back(line);
    EXPECT_EQ(reader.number(), int64_t(lines.size()));
  }
  return lines;
}

TEST(LineReader, GivesEachLineAndTheLastOneWithoutANewline) {
  testing::TempDir dir;
  std::string path = dir.write("rows.jsonl", "{\"a\": 1}\n\n{\"a\": 2}\r\n{\"a\": 3}");
  EXPECT_EQ(all_lines(path),
            (std::vector<std::string>{"{\"a\": 1}", "", "{\"a\": 2}\r", "{\"a\": 3}"}));
  EXPECT_TRUE(all_lines(dir.write("empty.jsonl", "")).empty());
}

TEST(LineReader, ALineLongerThanOneReadComesWhole) {
  testing::TempDir dir;
  std::string long_line(3 << 20, 'x');  // three of its 1 MiB reads
  std::string path = dir.write("long.jsonl", "short\n" + long_line + "\nend\n");
  EXPECT_EQ(all_lines(path, 4 << 20), (std::vector<std::string>{"short", long_line, "end"}));
}

TEST(LineReader, ALineOverTheBoundIsRefusedNamingFileAndLine) {
  testing::TempDir dir;
  std::string path = dir.write("zeros.jsonl", "ok\n" + std::string(5 << 20, '\0'));
  try {
    all_lines(path, 4 << 20);
    FAIL() << "a 5 MiB line passed a 4 MiB bound";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("zeros.jsonl"));
    EXPECT_THAT(e.what(), HasSubstr("line 2 is longer than 4194304 bytes"));
  }
}

TEST(LineReader, AFifoADeviceAndAFolderAreRefusedNotWaitedOn) {
  testing::TempDir dir;
  std::string fifo = dir.file("rows.jsonl");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.path()})
    EXPECT_THROW(LineReader(path, 1 << 20), DataError) << path;
}

}  // namespace line_reader_test
}  // namespace kiln
