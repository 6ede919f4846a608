// MANIFEST lines: what manifest_line writes reads back; damage, names outside the checkpoint's
// folder and names listed twice are DataErrors naming the line.

#include "kiln/io/manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

TEST(Manifest, ReadsBackWhatItWrites) {
  std::string text = manifest_line("model.safetensors", "weights") + manifest_line("empty", "");
  std::vector<ManifestEntry> entries = parse_manifest(text, "ckpt/MANIFEST");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].file, "model.safetensors");
  EXPECT_EQ(entries[0].size, 7u);
  EXPECT_EQ(text.substr(0, 8), fmt::format("{:08x}", entries[0].crc));
  EXPECT_EQ(entries[1].size, 0u);
  EXPECT_TRUE(parse_manifest("", "ckpt/MANIFEST").empty());
}

TEST(Manifest, DamageIsADataErrorNamingTheLine) {
  std::string good = manifest_line("a", "x");
  struct Case {
    std::string text, problem;
  };
  for (const Case& c : {Case{good + "not a manifest\n", "the CRC is 8 hex digits"},
                        Case{good + "0000000g 1 b\n", "the CRC is 8 hex digits"},
                        Case{good + "00000000 -1 b\n", "the size is a whole number"},
                        Case{good + "00000000 99999999999999999999 b\n", "the size is a whole"},
                        Case{good + "00000000 01 b\n", "the size is a whole number"},
                        Case{good + "00000000 1\n", "expected CRC, size and name"},
                        Case{good + "00000000 1 ../../big.bin\n", "not a file of the checkpoint"},
                        Case{good + "00000000 1 ..\n", "not a file of the checkpoint"},
                        Case{good + good, "lists \"a\" twice"},
                        Case{good + "00000000 1 b", "last line is cut short"}}) {
    SCOPED_TRACE(c.text);
    try {
      parse_manifest(c.text, "ckpt/MANIFEST");
      ADD_FAILURE() << "accepted";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), "ckpt/MANIFEST");
      EXPECT_EQ(e.record(), 1);
      EXPECT_THAT(e.what(), HasSubstr(c.problem));
    }
  }
}

}  // namespace
}  // namespace kiln::io
