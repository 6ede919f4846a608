#pragma once
// The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), just what
// tf.Example needs: varints, fixed32, length-delimited fields, and skipping unknown fields. A
// hand-written codec rather than generated classes, as TensorFlow's own fast Example parser does:
// it decodes straight into kiln's structures and knows the byte offset of every problem.
// Thread-safety: values over borrowed bytes.

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::io {

/// Wire types of the protobuf encoding.
enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

/// Thrown for malformed bytes; `offset` is relative to the start of the outermost message.
struct WireError {
  int64_t offset;
  std::string problem;
};

/// Reads fields of one message out of `bytes` (which it does not own).
class WireReader {
 public:
  explicit WireReader(std::string_view bytes, int64_t base_offset = 0)
      : bytes_(bytes), base_(base_offset) {}

  bool done() const { return position_ >= bytes_.size(); }
  /// All the bytes this reader reads (a string field's value, when it reads one).
  std::string_view bytes() const { return bytes_; }
  /// Offset of the next byte from the start of the outermost message.
  int64_t offset() const { return base_ + static_cast<int64_t>(position_); }

  /// Reads a field key; returns the field number and sets `type`.
  uint32_t read_key(WireType& type);
  uint64_t read_varint();
  uint32_t read_fixed32();
  /// A length-delimited payload; `payload_offset` receives the offset of its first byte.
  std::string_view read_bytes(int64_t& payload_offset);
  /// Skips a field's value of the given wire type (unknown fields are allowed by protobuf).
  void skip(WireType type);

 private:
  [[noreturn]] void fail(const std::string& problem) const;
  void need(size_t count, const char* what) const;

  std::string_view bytes_;
  int64_t base_;
  size_t position_ = 0;
};

/// Appends protobuf fields to a string.
class WireWriter {
 public:
  void key(uint32_t field, WireType type);
  void varint(uint64_t value);
  void fixed32(uint32_t value);
  /// A length-delimited field: key, length, payload.
  void bytes_field(uint32_t field, std::string_view payload);
  std::string& out() { return out_; }

 private:
  std::string out_;
};

}  // namespace kiln::io
