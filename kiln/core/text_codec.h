#pragma once
// Text encodings of binary data, as JSON interfaces need them: base64 (RFC 4648, the `{"b64": ...}`
// convention of TensorFlow Serving and `kiln data inspect`) and UTF-8 validation (bytes that are
// valid UTF-8 can be shown as a JSON string). Thread-safety: pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

/// Standard base64 with `=` padding.
std::string base64_encode(std::string_view bytes);
/// Decodes standard base64 (padding optional, no whitespace); nothing when malformed.
std::optional<std::string> base64_decode(std::string_view text);

/// True when `bytes` is well-formed UTF-8 (no overlong forms, surrogates or code points past
/// U+10FFFF).
bool is_valid_utf8(std::string_view bytes);
/// The offset of the first byte that does not start a well-formed sequence, or npos.
size_t first_invalid_utf8(std::string_view bytes);
/// `text` as a terminal may show it: control bytes (a NUL, which ends a C string, a newline inside
/// a cell, an escape sequence) and bytes that are not UTF-8 written as `\xNN`.
std::string terminal_text(std::string_view text);

/// How long an error message sent to a client may be, as TensorFlow Serving cuts its own.
constexpr size_t kClientMessageLimit = 1024;
/// An error message as a server sends it: bytes that are not UTF-8 as '?' (clients decode it as
/// UTF-8, and messages quote what clients sent), cut after kClientMessageLimit bytes with
/// "...TRUNCATED", never inside a character. Linear in the message's length.
std::string message_for_client(std::string message);

/// The number a whole string of at most 18 decimal digits spells (a step in a folder's name or a
/// file's row); none for anything else, a sign or a space included.
std::optional<int64_t> digits_value(std::string_view text);

}  // namespace kiln
