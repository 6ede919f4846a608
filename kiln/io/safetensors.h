#pragma once
// safetensors (docs/formats.md §6): an 8-byte little-endian header length N, N bytes of JSON
// describing each tensor's dtype, shape and byte range, then the tensor bytes. kiln writes its
// weights in this format so that any safetensors reader (Python included) loads them. This layer
// knows bytes and shapes only; engine/ converts to and from torch tensors. Thread-safety: pure
// functions.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::io {

/// One tensor of a parsed file; `data` points into the parsed file's buffer.
struct SafeTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// A parsed file. Owns the bytes the tensors point into.
struct SafeTensorsFile {
  std::map<std::string, std::string> metadata;
  std::vector<SafeTensor> tensors;  // in data-offset order
  std::string bytes;

  const SafeTensor* find(const std::string& name) const;
};

/// Bits per element of a safetensors dtype string (F32 → 32, F4 → 4); 0 when unknown.
int dtype_bits(const std::string& dtype);

/// Validates and parses (every rule of the reference implementation); throws DataError naming
/// `name` and the offending byte offset or tensor.
SafeTensorsFile parse_safetensors(std::string bytes, const std::string& name);
SafeTensorsFile read_safetensors(const std::string& path);

/// A tensor to write; `data` must hold exactly prod(shape) * bits / 8 bytes.
struct SafeTensorView {
  std::string name, dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t size = 0;
};

/// Serialises as the reference writer does: `__metadata__` first, tensors by the reference dtype
/// order (descending; roughly widest first) then name, compact JSON padded with spaces to a
/// multiple of 8 bytes.
std::string serialize_safetensors(std::vector<SafeTensorView> tensors,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace kiln::io
