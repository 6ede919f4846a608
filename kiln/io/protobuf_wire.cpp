#include "kiln/io/protobuf_wire.h"

#include <fmt/format.h>

namespace kiln::io {

void WireReader::fail(const std::string& problem) const { throw WireError{offset(), problem}; }

void WireReader::need(size_t count, const char* what) const {
  if (bytes_.size() - position_ < count)
    fail(fmt::format("truncated {}: {} bytes needed, {} left", what, count,
                     bytes_.size() - position_));
}

uint64_t WireReader::read_varint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    need(1, "varint");
    auto byte = static_cast<uint8_t>(bytes_[position_++]);
    value |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return value;
  }
  fail("varint longer than 10 bytes");
}

uint32_t WireReader::read_key(WireType& type) {
  int64_t at = offset();
  uint64_t key = read_varint();
  uint64_t wire = key & 7, field = key >> 3;
  if (field == 0 || field > 0x1fffffff)
    throw WireError{at, fmt::format("invalid field number {}", field)};
  if (wire != 0 && wire != 1 && wire != 2 && wire != 5)
    throw WireError{at, fmt::format("unsupported wire type {} for field {}", wire, field)};
  type = static_cast<WireType>(wire);
  return static_cast<uint32_t>(field);
}

uint32_t WireReader::read_fixed32() {
  need(4, "fixed32");
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<uint8_t>(bytes_[position_ + i]);
  position_ += 4;
  return value;
}

std::string_view WireReader::read_bytes(int64_t& payload_offset) {
  uint64_t length = read_varint();
  if (length > bytes_.size() - position_)
    fail(fmt::format("length-delimited field of {} bytes overruns its message ({} bytes left)",
                     length, bytes_.size() - position_));
  payload_offset = offset();
  std::string_view payload = bytes_.substr(position_, static_cast<size_t>(length));
  position_ += static_cast<size_t>(length);
  return payload;
}

void WireReader::skip(WireType type) {
  int64_t ignored = 0;
  switch (type) {
    case WireType::kVarint:
      read_varint();
      return;
    case WireType::kFixed64:
      need(8, "fixed64");
      position_ += 8;
      return;
    case WireType::kLengthDelimited:
      read_bytes(ignored);
      return;
    case WireType::kFixed32:
      need(4, "fixed32");
      position_ += 4;
      return;
  }
}

void WireWriter::key(uint32_t field, WireType type) {
  varint((uint64_t{field} << 3) | static_cast<uint8_t>(type));
}

void WireWriter::varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void WireWriter::fixed32(uint32_t value) {
  for (int i = 0; i < 4; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void WireWriter::bytes_field(uint32_t field, std::string_view payload) {
  key(field, WireType::kLengthDelimited);
  varint(payload.size());
  out_.append(payload.data(), payload.size());
}

}  // namespace kiln::io
