#pragma once
// The IDX format of MNIST and Fashion-MNIST (docs/formats.md §7.1): a big-endian magic (two zero
// bytes, a type code, the number of dimensions), one big-endian uint32 per dimension, then the
// data in C order. Files may be gzipped. Thread-safety: pure functions.

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::io {

enum class IdxType : uint8_t {
  kUint8 = 0x08,
  kInt8 = 0x09,
  kInt16 = 0x0B,
  kInt32 = 0x0C,
  kFloat32 = 0x0D,
  kFloat64 = 0x0E,
};

/// An IDX array. `data` holds the elements in native byte order.
struct IdxArray {
  IdxType type = IdxType::kUint8;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;

  int64_t element_count() const;
};

size_t idx_element_size(IdxType type);

/// Parses IDX bytes (already decompressed); `name` is used in errors, which are DataErrors with
/// the byte offset of the problem.
IdxArray parse_idx(const std::string& bytes, const std::string& name);
/// Reads an IDX file, gzipped or raw.
IdxArray read_idx(const std::string& path);
/// Encodes an array as raw IDX bytes (used by tests and converters).
std::string encode_idx(const IdxArray& array);

}  // namespace kiln::io
