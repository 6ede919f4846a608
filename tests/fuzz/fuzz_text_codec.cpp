// Base64 and UTF-8 checks on text from outside (`{"b64": ...}` values of serving requests,
// bytes features shown by `kiln data inspect`). Whatever base64 decodes must encode and decode
// back to the same bytes, and the two UTF-8 checks must agree.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kiln/core/text_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  bool valid = kiln::is_valid_utf8(text);
  if (valid != (kiln::first_invalid_utf8(text) == std::string_view::npos)) {
    std::fprintf(stderr, "is_valid_utf8 and first_invalid_utf8 disagree\n");
    std::abort();
  }
  auto decoded = kiln::base64_decode(text);
  if (decoded && kiln::base64_decode(kiln::base64_encode(*decoded)) != decoded) {
    std::fprintf(stderr, "base64 does not round-trip\n");
    std::abort();
  }
  return 0;
}
