#include "kiln/io/idx.h"

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"

namespace kiln::io {
namespace {

uint32_t read_be32(const std::string& bytes, size_t offset) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = (value << 8) | static_cast<uint8_t>(bytes[offset + i]);
  return value;
}

void put_be32(std::string& out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(value >> shift));
}

bool valid_type(uint8_t code) {
  return code == 0x08 || code == 0x09 || code == 0x0B || code == 0x0C || code == 0x0D ||
         code == 0x0E;
}

// Multi-byte elements are stored big-endian; flip them to the host's order in place.
void to_host_order(std::vector<uint8_t>& data, size_t element_size) {
  if (element_size == 1) return;
  for (size_t i = 0; i + element_size <= data.size(); i += element_size)
    std::reverse(data.begin() + i, data.begin() + i + element_size);
}

}  // namespace

int64_t IdxArray::element_count() const {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;  // parse_idx refuses dimensions whose product overflows
  return count;
}

size_t idx_element_size(IdxType type) {
  switch (type) {
    case IdxType::kUint8:
    case IdxType::kInt8:
      return 1;
    case IdxType::kInt16:
      return 2;
    case IdxType::kInt32:
    case IdxType::kFloat32:
      return 4;
    case IdxType::kFloat64:
      return 8;
  }
  return 1;
}

IdxArray parse_idx(const std::string& bytes, const std::string& name) {
  if (bytes.size() < 4)
    throw DataError(
        name, -1, static_cast<int64_t>(bytes.size()),
        fmt::format("truncated: the IDX magic needs 4 bytes, the file has {}", bytes.size()));
  uint32_t magic = read_be32(bytes, 0);
  uint8_t code = static_cast<uint8_t>(bytes[2]);
  uint8_t rank = static_cast<uint8_t>(bytes[3]);
  if (bytes[0] != 0 || bytes[1] != 0 || !valid_type(code) || rank == 0)
    throw DataError(
        name, -1, 0,
        fmt::format("wrong magic 0x{:08x}: not an IDX file (expected 0x0000TTNN with type "
                    "TT in 08,09,0B,0C,0D,0E and NN >= 1 dimensions)",
                    magic));
  size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header)
    throw DataError(name, -1, static_cast<int64_t>(bytes.size()),
                    fmt::format("truncated: the header of {} dimensions needs {} bytes, the file "
                                "has {}",
                                rank, header, bytes.size()));
  IdxArray array;
  array.type = static_cast<IdxType>(code);
  uint64_t expected = idx_element_size(array.type);
  for (size_t i = 0; i < rank; ++i) {
    uint32_t dim = read_be32(bytes, 4 + 4 * i);
    array.dims.push_back(dim);
    // Dimensions are < 2^32 each, so checking against the file size keeps the product bounded.
    expected *= dim;
    if (expected > bytes.size()) expected = bytes.size() + 1;
  }
  uint64_t available = bytes.size() - header;
  if (available != expected) {
    bool short_file = available < expected;
    throw DataError(name, -1, static_cast<int64_t>(short_file ? bytes.size() : header + expected),
                    short_file
                        ? fmt::format("truncated: the dimensions need more data bytes than "
                                      "the {} that follow the header",
                                      available)
                        : fmt::format("{} unexpected bytes after the data", available - expected));
  }
  // An empty array may still claim huge dimensions ([2^32 - 1, 2^32 - 1, 2^32 - 1, 0]), whose
  // product (before the 0) overflows wherever a shape is computed from them.
  int64_t product = 1;
  for (int64_t dim : array.dims)
    if (dim != 0 && __builtin_mul_overflow(product, dim, &product))
      throw DataError(name, -1, 4, "the dimensions multiply past 2^63 elements");
  array.data.assign(bytes.begin() + header, bytes.end());
  to_host_order(array.data, idx_element_size(array.type));
  return array;
}

IdxArray read_idx(const std::string& path) {
  std::string bytes = read_file_bytes(path);
  if (!is_gzip(bytes)) return parse_idx(bytes, path);
  return parse_idx(gunzip(bytes, path), path + " (decompressed)");
}

std::string encode_idx(const IdxArray& array) {
  std::string out = {0, 0, static_cast<char>(array.type), static_cast<char>(array.dims.size())};
  for (int64_t d : array.dims) put_be32(out, static_cast<uint32_t>(d));
  std::vector<uint8_t> data = array.data;
  to_host_order(data, idx_element_size(array.type));  // the flip is its own inverse
  out.append(data.begin(), data.end());
  return out;
}

}  // namespace kiln::io
