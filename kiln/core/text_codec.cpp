#include "kiln/core/text_codec.h"

#include <fmt/format.h>

#include <cstdint>

namespace kiln {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// The length of the UTF-8 sequence starting at `lead` and the smallest code point it may encode
// (anything smaller is an overlong form); 0 for a byte that cannot start a sequence.
int sequence_length(uint8_t lead, uint32_t& code_point, uint32_t& minimum) {
  if (lead < 0x80) return code_point = lead, minimum = 0, 1;
  if ((lead & 0xe0) == 0xc0) return code_point = lead & 0x1f, minimum = 0x80, 2;
  if ((lead & 0xf0) == 0xe0) return code_point = lead & 0x0f, minimum = 0x800, 3;
  if ((lead & 0xf8) == 0xf0) return code_point = lead & 0x07, minimum = 0x10000, 4;
  return 0;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t group = 0;
    for (size_t j = 0; j < 3; ++j)
      group = (group << 8) | (j < n ? static_cast<uint8_t>(bytes[i + j]) : 0u);
    for (size_t j = 0; j < 4; ++j)
      out.push_back(j <= n ? kAlphabet[(group >> (18 - 6 * j)) & 63] : '=');
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int value = base64_value(c);
    if (value < 0) return std::nullopt;
    buffer = (buffer << 6) | static_cast<uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  return out;
}

size_t first_invalid_utf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    uint32_t code_point = 0, minimum = 0;
    int length = sequence_length(static_cast<uint8_t>(bytes[i]), code_point, minimum);
    if (length == 0 || i + length > bytes.size()) return i;
    for (int k = 1; k < length; ++k) {
      auto next = static_cast<uint8_t>(bytes[i + k]);
      if ((next & 0xc0) != 0x80) return i;
      code_point = (code_point << 6) | (next & 0x3f);
    }
    if (code_point < minimum || code_point > 0x10ffff) return i;
    if (code_point >= 0xd800 && code_point <= 0xdfff) return i;
    i += static_cast<size_t>(length);
  }
  return std::string_view::npos;
}

bool is_valid_utf8(std::string_view bytes) {
  return first_invalid_utf8(bytes) == std::string_view::npos;
}

std::string terminal_text(std::string_view text) {
  std::string shown;
  shown.reserve(text.size());
  while (!text.empty()) {
    size_t bad = first_invalid_utf8(text);
    std::string_view valid = text.substr(0, bad);
    for (char c : valid) {
      auto byte = static_cast<uint8_t>(c);
      if (byte < 0x20 || byte == 0x7f)
        shown += fmt::format("\\x{:02x}", byte);
      else
        shown += c;
    }
    if (bad == std::string_view::npos) break;
    shown += fmt::format("\\x{:02x}", static_cast<uint8_t>(text[bad]));
    text.remove_prefix(bad + 1);
  }
  return shown;
}

std::optional<int64_t> digits_value(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

namespace {

// Drops a character that `text`'s end cuts short (its lead byte and the continuation bytes after).
void drop_cut_character(std::string& text) {
  size_t lead = text.size();
  while (lead > 0 && text.size() - lead < 3 && (uint8_t(text[lead - 1]) & 0xC0) == 0x80) --lead;
  if (lead == 0) return;
  auto byte = uint8_t(text[lead - 1]);
  // Only a byte that may lead a sequence (0xC2 to 0xF4) announces more; others stand alone.
  size_t length = byte > 0xF4 || byte < 0xC2 ? 1 : byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
  if (lead - 1 + length > text.size()) text.resize(lead - 1);
}

}  // namespace

std::string message_for_client(std::string message) {
  // Cut first: the repair then looks at 1 KiB at most, whatever a client made the message quote.
  bool cut = message.size() > kClientMessageLimit;
  if (cut) {
    message.resize(kClientMessageLimit);
    drop_cut_character(message);
  }
  std::string_view rest(message);
  for (size_t at = 0, bad; (bad = first_invalid_utf8(rest.substr(at))) != std::string::npos;
       at += bad + 1)
    message[at + bad] = '?';
  if (cut) message += "...TRUNCATED";
  return message;
}

}  // namespace kiln
