#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord framing, TensorBoard event files and checkpoint
// MANIFESTs. Uses the SSE4.2 crc32 instruction when the CPU has it, a table otherwise.
// Thread-safety: pure functions.

#include <cstddef>
#include <cstdint>

namespace kiln {

/// Extends `crc` (0 to start) over `size` bytes.
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t size);
inline uint32_t crc32c(const void* data, size_t size) { return crc32c_extend(0, data, size); }

/// The masked form TFRecord stores: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
inline uint32_t crc32c_mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace kiln
