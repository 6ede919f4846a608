// gRPC's framing of a unary call's message: unframe_message() on plain, gzip and deflate
// messages, on bombs and declared lengths over the limit, and on every malformed body; the
// frame_message() round trip; and percent_encode()'s form of grpc-message.

#include "kiln/net/grpc_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kiln::net {
namespace grpc_wire_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A message's 5-byte prefix: `flag`, then `length` big-endian.
std::string prefix(uint8_t flag, uint32_t length) {
  std::string bytes(5, '\0');
  bytes[0] = static_cast<char>(flag);
  bytes[1] = static_cast<char>(length >> 24 & 0xff);
  bytes[2] = static_cast<char>(length >> 16 & 0xff);
  bytes[3] = static_cast<char>(length >> 8 & 0xff);
  bytes[4] = static_cast<char>(length & 0xff);
  return bytes;
}

std::string framed(uint8_t flag, const std::string& bytes) {
  return prefix(flag, static_cast<uint32_t>(bytes.size())) + bytes;
}

// zlib's deflate format (what grpc-encoding: deflate means), by compress2().
std::string deflated(const std::string& plain) {
  uLongf size = compressBound(static_cast<uLong>(plain.size()));
  std::string out(size, '\0');
  int status = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                         reinterpret_cast<const Bytef*>(plain.data()),
                         static_cast<uLong>(plain.size()), Z_BEST_COMPRESSION);
  if (status != Z_OK) throw std::runtime_error("compress2 failed");
  out.resize(size);
  return out;
}

// The gzip format (window bits 16 + 15), by deflateInit2().
std::string gzipped(const std::string& plain) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&stream, static_cast<uLong>(plain.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
  stream.avail_in = static_cast<uInt>(plain.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  int status = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
  out.resize(stream.total_out);
  return out;
}

// Bytes that compress well but are not all alike, so that a mix-up of offsets shows.
std::string sample(size_t size) {
  std::string bytes;
  bytes.reserve(size);
  for (size_t i = 0; i < size; ++i) bytes += static_cast<char>('a' + (i * 7 + i / 13) % 26);
  return bytes;
}

TEST(GrpcWireTest, PlainMessageIsTakenAsIs) {
  std::string message(
      "\x0a\x03"
      "abc\x00\xff",
      7);
  GrpcUnframed unframed = unframe_message(framed(0, message), "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kOk);
  EXPECT_EQ(unframed.error, "");
  EXPECT_EQ(unframed.message, message);
}

TEST(GrpcWireTest, PlainMessageIgnoresTheEncodingItWasNotCompressedWith) {
  // The flag says uncompressed: grpc-encoding names what a compressed message would be in.
  GrpcUnframed unframed = unframe_message(framed(0, "hello"), "gzip", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kOk);
  EXPECT_EQ(unframed.message, "hello");
}

TEST(GrpcWireTest, EmptyMessageIsAMessage) {
  GrpcUnframed unframed = unframe_message(prefix(0, 0), "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kOk);
  EXPECT_EQ(unframed.message, "");
}

TEST(GrpcWireTest, PlainMessageOfExactlyTheLimitIsTaken) {
  std::string message = sample(100);
  GrpcUnframed unframed = unframe_message(framed(0, message), "", 100);
  EXPECT_EQ(unframed.code, GrpcCode::kOk);
  EXPECT_EQ(unframed.message, message);
}

TEST(GrpcWireTest, GzipMessageInflatesToTheOriginal) {
  std::string message = sample(100000);
  std::string compressed = gzipped(message);
  ASSERT_LT(compressed.size(), message.size());
  GrpcUnframed unframed = unframe_message(framed(1, compressed), "gzip", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kOk) << unframed.error;
  EXPECT_EQ(unframed.message, message);
}

TEST(GrpcWireTest, DeflateMessageInflatesToTheOriginal) {
  std::string message = sample(100000);
  std::string compressed = deflated(message);
  ASSERT_LT(compressed.size(), message.size());
  GrpcUnframed unframed = unframe_message(framed(1, compressed), "deflate", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kOk) << unframed.error;
  EXPECT_EQ(unframed.message, message);
}

TEST(GrpcWireTest, CompressedMessageOfExactlyTheLimitIsTaken) {
  std::string message = sample(50000);
  GrpcUnframed unframed = unframe_message(framed(1, gzipped(message)), "gzip", message.size());
  EXPECT_EQ(unframed.code, GrpcCode::kOk) << unframed.error;
  EXPECT_EQ(unframed.message, message);
  GrpcUnframed over = unframe_message(framed(1, gzipped(message)), "gzip", message.size() - 1);
  EXPECT_EQ(over.code, GrpcCode::kResourceExhausted);
}

TEST(GrpcWireTest, GzipBombStopsAtTheLimit) {
  const size_t inflated = 10 << 20, most = 1 << 20;
  std::string compressed = gzipped(std::string(inflated, '\0'));
  ASSERT_LT(compressed.size(), size_t(100) << 10);
  GrpcUnframed unframed = unframe_message(framed(1, compressed), "gzip", most);
  EXPECT_EQ(unframed.code, GrpcCode::kResourceExhausted);
  EXPECT_EQ(unframed.message, "");
  // The size it names is what it inflated before stopping: over the limit, far short of the whole.
  ASSERT_THAT(unframed.error, StartsWith("Received message larger than max ("));
  size_t named = std::stoul(unframed.error.substr(unframed.error.find('(') + 1));
  EXPECT_GT(named, most);
  EXPECT_LE(named, most + (64 << 10));
  EXPECT_THAT(unframed.error, HasSubstr(" vs. 1048576)"));
}

TEST(GrpcWireTest, DeflateBombStopsAtTheLimit) {
  std::string compressed = deflated(std::string(10 << 20, 'x'));
  GrpcUnframed unframed = unframe_message(framed(1, compressed), "deflate", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kResourceExhausted);
  EXPECT_THAT(unframed.error, StartsWith("Received message larger than max ("));
}

TEST(GrpcWireTest, DeclaredLengthOverTheLimitIsResourceExhausted) {
  // Only the prefix came: the length it declares is enough to refuse it.
  GrpcUnframed unframed = unframe_message(prefix(0, 2000), "", 1000);
  EXPECT_EQ(unframed.code, GrpcCode::kResourceExhausted);
  EXPECT_EQ(unframed.error, "Received message larger than max (2000 vs. 1000)");
  GrpcUnframed whole = unframe_message(framed(0, sample(1001)), "", 1000);
  EXPECT_EQ(whole.code, GrpcCode::kResourceExhausted);
  EXPECT_EQ(whole.error, "Received message larger than max (1001 vs. 1000)");
}

TEST(GrpcWireTest, LargestDeclaredLengthIsReadUnsigned) {
  GrpcUnframed unframed = unframe_message(prefix(0, 0xffffffffu), "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kResourceExhausted);
  EXPECT_EQ(unframed.error, "Received message larger than max (4294967295 vs. 1048576)");
}

TEST(GrpcWireTest, EmptyBodyIsInternal) {
  GrpcUnframed unframed = unframe_message("", "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kInternal);
  EXPECT_THAT(unframed.error, HasSubstr("no request message"));
}

TEST(GrpcWireTest, BodyShorterThanAPrefixIsInternal) {
  for (size_t size = 1; size < 5; ++size) {
    GrpcUnframed unframed = unframe_message(std::string(size, '\0'), "", 1 << 20);
    EXPECT_EQ(unframed.code, GrpcCode::kInternal) << size;
    EXPECT_THAT(unframed.error, HasSubstr("cut short")) << size;
  }
}

TEST(GrpcWireTest, MessageCutShortIsInternal) {
  std::string body = framed(0, "hello world");
  body.pop_back();
  GrpcUnframed unframed = unframe_message(body, "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kInternal);
  EXPECT_THAT(unframed.error, HasSubstr("cut short"));
  EXPECT_EQ(unframed.message, "");
}

TEST(GrpcWireTest, TwoMessagesAreInternal) {
  GrpcUnframed unframed = unframe_message(framed(0, "one") + framed(0, "two"), "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kInternal);
  EXPECT_THAT(unframed.error, HasSubstr("more than one"));
  GrpcUnframed trailing = unframe_message(framed(0, "one") + "x", "", 1 << 20);
  EXPECT_EQ(trailing.code, GrpcCode::kInternal);
}

TEST(GrpcWireTest, FlagByteOtherThanZeroOrOneIsInternal) {
  GrpcUnframed unframed = unframe_message(framed(2, "hello"), "", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kInternal);
  EXPECT_THAT(unframed.error, HasSubstr("first byte is 2"));
  GrpcUnframed high = unframe_message(framed(0x80, "hello"), "gzip", 1 << 20);
  EXPECT_EQ(high.code, GrpcCode::kInternal);
  EXPECT_THAT(high.error, HasSubstr("first byte is 128"));
}

TEST(GrpcWireTest, CompressedFlagWithoutEncodingIsInternal) {
  std::string body = framed(1, gzipped("hello"));
  GrpcUnframed none = unframe_message(body, "", 1 << 20);
  EXPECT_EQ(none.code, GrpcCode::kInternal);
  EXPECT_THAT(none.error, HasSubstr("without grpc-encoding"));
  GrpcUnframed identity = unframe_message(body, "identity", 1 << 20);
  EXPECT_EQ(identity.code, GrpcCode::kInternal);
  EXPECT_THAT(identity.error, HasSubstr("without grpc-encoding"));
}

TEST(GrpcWireTest, UnknownEncodingIsUnimplementedAndNamesThoseRead) {
  GrpcUnframed unframed = unframe_message(framed(1, "whatever"), "snappy", 1 << 20);
  EXPECT_EQ(unframed.code, GrpcCode::kUnimplemented);
  EXPECT_THAT(unframed.error, HasSubstr("snappy"));
  EXPECT_THAT(unframed.error, HasSubstr(kGrpcAcceptEncoding));
  EXPECT_THAT(unframed.error, HasSubstr("gzip"));
  EXPECT_THAT(unframed.error, HasSubstr("deflate"));
}

TEST(GrpcWireTest, CorruptGzipIsInternal) {
  std::string compressed = gzipped(sample(10000));
  std::string garbage = compressed;
  for (size_t i = 10; i < garbage.size(); i += 3) garbage[i] = static_cast<char>(garbage[i] ^ 0x5a);
  GrpcUnframed corrupt = unframe_message(framed(1, garbage), "gzip", 1 << 20);
  EXPECT_EQ(corrupt.code, GrpcCode::kInternal);
  EXPECT_THAT(corrupt.error, HasSubstr("does not inflate whole"));

  GrpcUnframed not_gzip = unframe_message(framed(1, "this is not gzip"), "gzip", 1 << 20);
  EXPECT_EQ(not_gzip.code, GrpcCode::kInternal);

  // A gzip stream cut short (and framed at its shorter length) is not a message either.
  std::string cut = compressed.substr(0, compressed.size() / 2);
  GrpcUnframed truncated = unframe_message(framed(1, cut), "gzip", 1 << 20);
  EXPECT_EQ(truncated.code, GrpcCode::kInternal);
  EXPECT_THAT(truncated.error, HasSubstr("does not inflate whole"));

  // Bytes after the gzip stream's end.
  GrpcUnframed trailing = unframe_message(framed(1, compressed + "junk"), "gzip", 1 << 20);
  EXPECT_EQ(trailing.code, GrpcCode::kInternal);

  // gzip read as deflate: the formats' headers differ.
  GrpcUnframed mixed = unframe_message(framed(1, compressed), "deflate", 1 << 20);
  EXPECT_EQ(mixed.code, GrpcCode::kInternal);
}

TEST(GrpcWireTest, FrameMessageRoundTrips) {
  for (const std::string& message :
       {std::string(), std::string("hi"), std::string("\0\1\2", 3), sample(70000)}) {
    std::string body = frame_message(message);
    ASSERT_EQ(body.size(), message.size() + 5);
    EXPECT_EQ(body.substr(0, 5), prefix(0, static_cast<uint32_t>(message.size())));
    GrpcUnframed unframed = unframe_message(body, "", 1 << 20);
    EXPECT_EQ(unframed.code, GrpcCode::kOk);
    EXPECT_EQ(unframed.message, message);
  }
}

TEST(GrpcWireTest, FrameMessageWritesTheLengthBigEndian) {
  std::string body = frame_message(std::string(0x010203, 'z'));
  EXPECT_EQ(body.substr(0, 5), std::string("\x00\x00\x01\x02\x03", 5));
}

TEST(GrpcWireTest, PercentEncodeKeepsPrintableAscii) {
  std::string printable;
  for (int c = 0x20; c <= 0x7e; ++c)
    if (c != '%') printable += static_cast<char>(c);
  EXPECT_EQ(percent_encode(printable), printable);
  EXPECT_EQ(percent_encode(""), "");
}

TEST(GrpcWireTest, PercentEncodeEscapesPercentNonAsciiAndControls) {
  EXPECT_EQ(percent_encode("100%"), "100%25");
  EXPECT_EQ(percent_encode("caf\xc3\xa9"), "caf%C3%A9");  // UTF-8 "é"
  EXPECT_EQ(percent_encode("a\nb"), "a%0Ab");
  EXPECT_EQ(percent_encode(std::string("\0\x7f\xff", 3)), "%00%7F%FF");
  EXPECT_EQ(percent_encode("\t"), "%09");
}

// PROTOCOL-HTTP2's Timeout: 1 to 8 ASCII digits, then a unit of H, M, S, m, u or n.
TEST(GrpcWireTest, AClientsTimeoutIsReadInEachUnitAndAMalformedOneIsNone) {
  using namespace std::chrono;
  EXPECT_EQ(parse_grpc_timeout("2H"), duration_cast<nanoseconds>(hours(2)));
  EXPECT_EQ(parse_grpc_timeout("3M"), duration_cast<nanoseconds>(minutes(3)));
  EXPECT_EQ(parse_grpc_timeout("10S"), duration_cast<nanoseconds>(seconds(10)));
  EXPECT_EQ(parse_grpc_timeout("250m"), duration_cast<nanoseconds>(milliseconds(250)));
  EXPECT_EQ(parse_grpc_timeout("99999999u"), duration_cast<nanoseconds>(microseconds(99999999)));
  EXPECT_EQ(parse_grpc_timeout("0n"), nanoseconds(0));
  EXPECT_LE(parse_grpc_timeout("99999999H"), duration_cast<nanoseconds>(hours(24 * 366 * 100)))
      << "a century at most: no overflow";
  EXPECT_GT(parse_grpc_timeout("99999999H"), duration_cast<nanoseconds>(hours(24 * 365 * 99)));
  for (const char* malformed : {"", "S", "5", "123456789S", "5s", "-5S", "5 S", "0x5S", "5SS"})
    EXPECT_FALSE(parse_grpc_timeout(malformed)) << malformed;
}

}  // namespace grpc_wire_test
}  // namespace kiln::net
