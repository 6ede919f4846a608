// Whole-file gzip reads: a stream that inflates past the limit is refused before it can exhaust
// memory, and damage names the compressed offset.

#include "kiln/io/file_bytes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/io/byte_stream.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

std::string gzip(const testing::TempDir& dir, const std::string& bytes) {
  auto out = open_output(dir.file("z.gz"), Compression::kGzip);
  out->write(bytes.data(), bytes.size());
  out->close();
  return read_file_bytes(dir.file("z.gz"));
}

TEST(Gunzip, InflatesUpToTheLimitAndRefusesMore) {
  testing::TempDir dir;
  std::string zeros(3 << 20, '\0');
  std::string compressed = gzip(dir, zeros);
  EXPECT_LT(compressed.size(), 10000u);  // a small file...
  EXPECT_EQ(gunzip(compressed, "z.gz", zeros.size()), zeros);
  try {
    gunzip(compressed, "z.gz", 1 << 20);  // ...that inflates past what is allowed
    ADD_FAILURE() << "no error past the limit";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "z.gz");
    EXPECT_THAT(e.what(), HasSubstr("inflates to more than 1048576 bytes"));
  }
}

TEST(Gunzip, NamesTheOffsetWhereATruncatedStreamEnds) {
  testing::TempDir dir;
  std::string compressed = gzip(dir, std::string(100000, 'a') + "tail");
  try {
    gunzip(compressed.substr(0, compressed.size() - 3), "cut.gz");
    ADD_FAILURE() << "no error for a cut stream";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cut.gz"));
    EXPECT_THAT(e.what(), HasSubstr("corrupt or truncated gzip stream"));
  }
}

}  // namespace
}  // namespace kiln::io
