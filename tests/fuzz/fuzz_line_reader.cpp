// The lines of a text file as core/line_reader gives them (`kiln predict`'s JSON lines input):
// any bytes give lines or a kiln::DataError for a line over the bound. Joined with newlines, the
// lines given are the file (less a last newline); none is longer than the bound; numbers count
// from 1. The bound is small, so that a line crossing the reader's 1 MiB reads is over it or
// not as the fuzzer chooses.

#include <cstdint>
#include <string>

#include "kiln/core/error.h"
#include "kiln/core/line_reader.h"
#include "tests/fuzz/temp_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t bound = size_t(data[0]) * 64;  // 0 to 16 KiB
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string& path = kiln::fuzz::write_temp_file(bytes);
  std::string joined, line;
  try {
    kiln::LineReader reader(path, bound);
    int64_t count = 0;
    while (reader.next(line)) {
      if (line.size() > bound || reader.number() != ++count) __builtin_trap();
      if (count > 1) joined += '\n';
      joined += line;
    }
  } catch (const kiln::DataError&) {
    return 0;  // a line over the bound
  }
  std::string expected = bytes;
  if (!expected.empty() && expected.back() == '\n') expected.pop_back();
  if (joined != expected) __builtin_trap();
  return 0;
}
