#pragma once
// Errors of the serving API, with TensorFlow Serving's status codes and the HTTP status each
// maps to (docs/formats.md §4: http_server.cc's ToHTTPStatusCode). A request that
// fails gets `{"error": MESSAGE}` with that status; the server goes on.
// Thread-safety: values.

#include <stdexcept>
#include <string>

namespace kiln::serving {

enum class StatusCode {
  kInvalidArgument,     // 400
  kFailedPrecondition,  // 400
  kOutOfRange,          // 400
  kUnauthenticated,     // 401
  kPermissionDenied,    // 403
  kNotFound,            // 404
  kAborted,             // 409
  kResourceExhausted,   // 429
  kInternal,            // 500
  kUnimplemented,       // 501
  kUnavailable,         // 503
  kDeadlineExceeded,    // 504
  kCancelled,  // 499 (google.rpc.Code maps CANCELLED so): the client went before its answer
};

/// The HTTP status TensorFlow Serving answers `code` with.
int http_status(StatusCode code);

class ServingError : public std::runtime_error {
 public:
  ServingError(StatusCode code, const std::string& message)
      : std::runtime_error(message), code_(code), message_(message) {}
  StatusCode code() const { return code_; }
  /// The whole message: what() ends at a NUL, which a name the client sent may hold.
  const std::string& message() const { return message_; }
  int http_status() const { return serving::http_status(code_); }

 private:
  StatusCode code_;
  std::string message_;
};

/// `{"error": "MESSAGE"}`, the body of every failed request.
std::string error_body(const std::string& message);

}  // namespace kiln::serving
