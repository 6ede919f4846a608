#include "kiln/net/grpc_wire.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>

namespace kiln::net {
namespace {

GrpcUnframed failed(GrpcCode code, std::string error) {
  GrpcUnframed result;
  result.code = code;
  result.error = std::move(error);
  return result;
}

// Inflates gzip (window bits 16 + 15) or zlib's deflate (15) into at most max_bytes.
GrpcUnframed inflate_message(std::string_view compressed, int window_bits, size_t max_bytes) {
  z_stream stream{};
  if (inflateInit2(&stream, window_bits) != Z_OK)
    return failed(GrpcCode::kInternal, "cannot start inflating the message");
  GrpcUnframed result;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  char chunk[16 << 10];
  int status = Z_OK;
  while (status == Z_OK) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof chunk;
    status = inflate(&stream, Z_NO_FLUSH);
    size_t produced = sizeof chunk - stream.avail_out;
    if (result.message.size() + produced > max_bytes) {
      inflateEnd(&stream);  // bounded before it is kept: a small bomb stays small
      return failed(GrpcCode::kResourceExhausted,
                    message_too_large(result.message.size() + produced, max_bytes));
    }
    result.message.append(chunk, produced);
    if (status == Z_BUF_ERROR && stream.avail_in == 0) break;  // input ended early
  }
  inflateEnd(&stream);
  if (status != Z_STREAM_END || stream.avail_in != 0)
    return failed(GrpcCode::kInternal, "the compressed message does not inflate whole");
  return result;
}

}  // namespace

size_t declared_length(std::string_view body) {
  size_t length = 0;
  for (size_t i = 1; i < kGrpcPrefixBytes; ++i)
    length = length << 8 | static_cast<unsigned char>(body[i]);
  return length;
}

std::string message_too_large(size_t size, size_t max_bytes) {
  return fmt::format("Received message larger than max ({} vs. {})", size, max_bytes);
}

GrpcUnframed unframe_message(std::string_view body, std::string_view encoding, size_t max_bytes) {
  if (body.size() < kGrpcPrefixBytes)
    return failed(GrpcCode::kInternal, body.empty() ? "the call carried no request message"
                                                    : "the request message is cut short");
  auto flag = static_cast<uint32_t>(static_cast<unsigned char>(body[0]));
  size_t length = declared_length(body);
  if (flag > 1)
    return failed(GrpcCode::kInternal, fmt::format("a message's first byte is {}, not 0 or 1 "
                                                   "(compressed or not)",
                                                   flag));
  if (flag == 0 && length > max_bytes)
    return failed(GrpcCode::kResourceExhausted, message_too_large(length, max_bytes));
  if (body.size() - kGrpcPrefixBytes < length)
    return failed(GrpcCode::kInternal, "the request message is cut short");
  if (body.size() - kGrpcPrefixBytes > length)
    return failed(GrpcCode::kInternal, "a unary call carried more than one request message");
  std::string_view bytes = body.substr(kGrpcPrefixBytes);
  if (flag == 0) return GrpcUnframed{GrpcCode::kOk, "", std::string(bytes)};
  if (encoding == "gzip") return inflate_message(bytes, 16 + MAX_WBITS, max_bytes);
  if (encoding == "deflate") return inflate_message(bytes, MAX_WBITS, max_bytes);
  if (encoding.empty() || encoding == "identity")
    return failed(GrpcCode::kInternal, "a message marked compressed, without grpc-encoding");
  return failed(GrpcCode::kUnimplemented,
                fmt::format("compression \"{}\" is not served; this server reads {}",
                            std::string(encoding), kGrpcAcceptEncoding));
}

std::string frame_message(std::string_view message) {
  std::string framed(kGrpcPrefixBytes, '\0');
  auto length = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) framed[size_t(4 - i)] = static_cast<char>(length >> (8 * i) & 0xff);
  framed.append(message);
  return framed;
}

std::string percent_encode(std::string_view message) {
  std::string encoded;
  encoded.reserve(message.size());
  for (char c : message) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte <= 0x7e && byte != '%')
      encoded += c;
    else
      encoded += fmt::format("%{:02X}", byte);
  }
  return encoded;
}

std::optional<std::chrono::nanoseconds> parse_grpc_timeout(std::string_view value) {
  if (value.size() < 2 || value.size() > 9) return std::nullopt;
  int64_t amount = 0;
  for (char digit : value.substr(0, value.size() - 1)) {
    if (digit < '0' || digit > '9') return std::nullopt;
    amount = amount * 10 + (digit - '0');
  }
  using std::chrono::duration_cast;
  using std::chrono::nanoseconds;
  // In seconds first: 99,999,999 hours would overflow nanoseconds.
  double seconds = 0;
  switch (value.back()) {
    case 'H':
      seconds = double(amount) * 3600;
      break;
    case 'M':
      seconds = double(amount) * 60;
      break;
    case 'S':
      seconds = double(amount);
      break;
    case 'm':
      return duration_cast<nanoseconds>(std::chrono::milliseconds(amount));
    case 'u':
      return duration_cast<nanoseconds>(std::chrono::microseconds(amount));
    case 'n':
      return nanoseconds(amount);
    default:
      return std::nullopt;
  }
  constexpr double kCentury = 100.0 * 365.25 * 24 * 3600;
  return duration_cast<nanoseconds>(std::chrono::duration<double>(std::min(seconds, kCentury)));
}

}  // namespace kiln::net
