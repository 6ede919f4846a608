// A checkpoint's MANIFEST, as a load reads it before trusting any file of the checkpoint. What is
// accepted must read back the same once written again by manifest_line.

#include <cstdint>
#include <cstdlib>
#include <string>

#include "kiln/core/error.h"
#include "kiln/io/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::string again;
    for (const auto& entry : kiln::io::parse_manifest(text, "MANIFEST"))
      again += fmt::format("{:08x} {} {}\n", entry.crc, entry.size, entry.file);
    if (again != text) std::abort();  // accepted text that is not what kiln writes
  } catch (const kiln::Error&) {
  }
  return 0;
}
