// IDX arrays (MNIST, Fashion-MNIST), raw or gzipped. A parsed array must encode back to exactly
// the bytes it came from: the format has one encoding, and the converters rely on it.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/idx.h"
#include "tests/fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    // Gzipped files take the path a dataset's file does: read, inflate, parse.
    if (kiln::io::is_gzip(bytes)) kiln::io::read_idx(kiln::fuzz::write_temp_file(bytes));
  } catch (const kiln::Error&) {
  }
  kiln::io::IdxArray array;
  try {
    array = kiln::io::parse_idx(bytes, "fuzz.idx");
  } catch (const kiln::Error&) {
    return 0;
  }
  if (static_cast<size_t>(array.element_count()) * kiln::io::idx_element_size(array.type) !=
          array.data.size() ||
      kiln::io::encode_idx(array) != bytes) {
    std::fprintf(stderr, "a parsed IDX array does not match its bytes\n");
    std::abort();
  }
  return 0;
}
