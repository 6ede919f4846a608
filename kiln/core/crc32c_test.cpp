#include "kiln/core/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace kiln {
namespace {

// Bit-at-a-time reference, independent of the table and the hardware instruction.
uint32_t reference_crc32c(const uint8_t* data, size_t size) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < size; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78u : 0);
  }
  return ~crc;
}

TEST(Crc32c, CheckValue) {
  const char* text = "123456789";
  EXPECT_EQ(crc32c(text, std::strlen(text)), 0xE3069283u);
}

TEST(Crc32c, EmptyInputIsZeroAndKeepsTheRunningValue) {
  EXPECT_EQ(crc32c("", 0), 0u);
  EXPECT_EQ(crc32c_extend(0xE3069283u, "", 0), 0xE3069283u);
}

TEST(Crc32c, Rfc3720Vectors) {
  uint8_t buf[32];
  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(crc32c(buf, sizeof(buf)), 0x8a9136aau);
  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(crc32c(buf, sizeof(buf)), 0x62a8ab43u);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(crc32c(buf, sizeof(buf)), 0x46dd794eu);
  for (int i = 0; i < 32; ++i) buf[i] = static_cast<uint8_t>(31 - i);
  EXPECT_EQ(crc32c(buf, sizeof(buf)), 0x113fdb5cu);
}

TEST(Crc32c, MatchesBitwiseReferenceAtEveryLengthAndAlignment) {
  std::vector<uint8_t> data(100);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  for (size_t start = 0; start < 8; ++start)
    for (size_t size = 0; start + size <= data.size(); ++size)
      ASSERT_EQ(crc32c(data.data() + start, size), reference_crc32c(data.data() + start, size))
          << "start " << start << " size " << size;
}

TEST(Crc32c, ExtendingInPiecesEqualsTheWhole) {
  std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
  uint32_t whole = crc32c(text.data(), text.size());
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    uint32_t crc = crc32c(text.data(), cut);
    crc = crc32c_extend(crc, text.data() + cut, text.size() - cut);
    ASSERT_EQ(crc, whole) << "cut at " << cut;
  }
  uint32_t byte_by_byte = 0;
  for (char c : text) byte_by_byte = crc32c_extend(byte_by_byte, &c, 1);
  EXPECT_EQ(byte_by_byte, whole);
}

TEST(Crc32c, MaskRotatesAndAddsTheTfRecordConstant) {
  EXPECT_EQ(crc32c_mask(0), 0xa282ead8u);
  EXPECT_EQ(crc32c_mask(0xE3069283u), 0xc78ab0e5u);
  uint32_t crc = crc32c("foo", 3);
  EXPECT_NE(crc32c_mask(crc), crc);
  EXPECT_NE(crc32c_mask(crc32c_mask(crc)), crc);
  uint32_t rotated = crc32c_mask(crc) - 0xa282ead8u;  // unmask
  EXPECT_EQ((rotated >> 17) | (rotated << 15), crc);
}

}  // namespace
}  // namespace kiln
