#include "kiln/core/crc32c.h"

#include <array>
#include <cstring>

namespace kiln {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78u;  // reflected Castagnoli polynomial

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

uint32_t extend_table(uint32_t crc, const uint8_t* p, size_t size) {
  static const std::array<uint32_t, 256> table = make_table();
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t extend_hardware(uint32_t crc, const uint8_t* p,
                                                           size_t size) {
  uint64_t wide = crc;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    wide = __builtin_ia32_crc32di(wide, word);
  }
  uint32_t narrow = static_cast<uint32_t>(wide);
  for (; size > 0; --size, ++p) narrow = __builtin_ia32_crc32qi(narrow, *p);
  return narrow;
}
#endif

}  // namespace

uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  static const bool has_sse42 = __builtin_cpu_supports("sse4.2");
  crc = has_sse42 ? extend_hardware(crc, p, size) : extend_table(crc, p, size);
#else
  crc = extend_table(crc, p, size);
#endif
  return ~crc;
}

}  // namespace kiln
