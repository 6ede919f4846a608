#pragma once
// gRPC's framing of a unary call's messages in its HTTP/2 stream, as its protocol document
// (PROTOCOL-HTTP2) specifies it: each message is a byte saying whether it is compressed, its
// length in 4 bytes big-endian, then its bytes; a status goes back in the trailers as
// `grpc-status` and a percent-encoded `grpc-message`. Free of HTTP/2 and of gRPC's library, so
// that the connection (grpc_connection.h) and its fuzz target share one reader of the framing.
// Thread-safety: free functions of their arguments.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::net {

/// gRPC's status codes that the framing itself answers with (the rest come from the services).
enum class GrpcCode : int {
  kOk = 0,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kResourceExhausted = 8,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
};

/// What reading a request's body gave: its one message, or the status to answer instead.
struct GrpcUnframed {
  GrpcCode code = GrpcCode::kOk;
  std::string error;    // when code is not kOk
  std::string message;  // the message's bytes, inflated
};

/// The one message of a unary call's `body` (every DATA byte of the stream), sent with
/// `grpc-encoding: encoding` (empty: none), at most `max_bytes` once inflated: gzip and deflate
/// are inflated, identity taken as is. A body of no message, of a message cut short or of two is
/// INTERNAL; one over the limit RESOURCE_EXHAUSTED; an encoding not known UNIMPLEMENTED.
GrpcUnframed unframe_message(std::string_view body, std::string_view encoding, size_t max_bytes);

/// A framed message's prefix: its flag byte and its length.
constexpr size_t kGrpcPrefixBytes = 5;

/// The length the prefix at the start of `body` declares (`body` holds the prefix whole).
size_t declared_length(std::string_view body);

/// gRPC's own words for a message over the limit, which clients may look for.
std::string message_too_large(size_t size, size_t max_bytes);

/// `message` framed, uncompressed.
std::string frame_message(std::string_view message);

/// `grpc-message`'s form of a status message: bytes outside printable ASCII, and '%', as %XX.
std::string percent_encode(std::string_view message);

/// The time a client gives its call, as `grpc-timeout` says it: 1 to 8 digits and a unit (H, M,
/// S, m, u, n for hours down to nanoseconds). Nothing when it is malformed; one past a century
/// is a century.
std::optional<std::chrono::nanoseconds> parse_grpc_timeout(std::string_view value);

/// The encodings unframe_message() reads, for `grpc-accept-encoding`.
constexpr const char* kGrpcAcceptEncoding = "identity,deflate,gzip";

}  // namespace kiln::net
