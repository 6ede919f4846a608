#pragma once
// HTTP/1.1 requests read from a connection's bytes as they arrive (RFC 9112): the request line,
// the header fields, and a body of Content-Length bytes or in chunks, within limits on the
// header and body sizes. What `kiln serve`'s event loop (http_server.h) reads with; torch-free,
// and fuzzed (tests/fuzz/fuzz_http_request.cpp).
// Thread-safety: one parser per connection.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/net/abandoned.h"

namespace kiln::net {

struct HttpRequest {
  std::string method;     // "GET", "POST", ...
  std::string path;       // the target's path, percent-decoded, without its query
  std::string query;      // after '?', as sent
  int minor_version = 1;  // HTTP/1.minor
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  bool keep_alive = true;  // the connection stays open after the answer
  // Set by the event loop (not the parser) once no client waits for the answer: its connection
  // is gone (reset, or closed by the server after an error).
  Abandoned abandoned;

  /// The value of the header `lower_case_name`, or null.
  const std::string* header(std::string_view lower_case_name) const;
};

struct HttpLimits {
  size_t max_header_bytes = 64 << 10;  // request line and header fields
  size_t max_body_bytes = 16 << 20;
};

class HttpRequestParser {
 public:
  enum class Status { kIncomplete, kComplete, kFailed };

  explicit HttpRequestParser(HttpLimits limits) : limits_(limits) {}

  /// Reads `bytes`, which begin where the request begins and hold all of it that has come (and
  /// maybe more after it); call again with more. Work done on earlier calls is not repeated.
  Status parse(std::string_view bytes);
  /// The request, once kComplete; consumed() of the bytes were its.
  HttpRequest& request() { return request_; }
  size_t consumed() const { return consumed_; }
  /// Once kFailed: the HTTP status to answer with (400, 413, 415, 431, 501, 505) and why.
  int error_status() const { return error_status_; }
  const std::string& error() const { return error_; }
  /// Whether the request line and header fields are in.
  bool headers_done() const { return stage_ > Stage::kHead; }
  /// Whether the client asked to be told to go on before it sends its body
  /// (`Expect: 100-continue`) and the body has not begun.
  bool awaits_continue() const { return awaits_continue_; }
  /// Why a request stopped short when its client stopped sending for `seconds`; "" when no
  /// body had begun, as when a client opens a connection and never uses it.
  std::string stall_reason(int seconds) const;
  /// The same for a client that closed its connection inside the body; "" when none had begun.
  std::string cut_short_reason() const;
  /// Ready for the next request on the connection.
  void reset() { *this = HttpRequestParser(limits_); }

 private:
  enum class Stage { kHead, kBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kDone };
  Status fail(int status, std::string why);
  Status parse_head(std::string_view bytes);
  Status read_header_fields(std::string_view head);
  Status check_host();
  Status choose_body();
  Status parse_chunks(std::string_view bytes);
  std::string short_body(const std::string& cause) const;

  HttpLimits limits_;
  HttpRequest request_;
  Stage stage_ = Stage::kHead;
  bool head_started_ = false;  // the request line has begun
  size_t head_start_ = 0;      // where the request line begins
  size_t position_ = 0;        // bytes looked at so far
  size_t trailers_start_ = 0;  // where the fields after the last chunk begin
  size_t seen_ = 0;            // bytes given to the last parse()
  size_t consumed_ = 0;        // the whole request's bytes, once complete
  uint64_t body_length_ = 0;   // Content-Length, or the current chunk's size
  bool chunked_ = false;
  bool awaits_continue_ = false;
  int error_status_ = 0;
  std::string error_;
};

/// The bytes of an answer with `body` (Content-Length framing), closing the connection after it
/// unless `keep_alive`.
std::string http_response(int status, std::string_view content_type, std::string_view body,
                          bool keep_alive);
/// The interim answer to `Expect: 100-continue`.
inline constexpr std::string_view kHttpContinue = "HTTP/1.1 100 Continue\r\n\r\n";

}  // namespace kiln::net
