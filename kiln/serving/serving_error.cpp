#include "kiln/serving/serving_error.h"

#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"

namespace kiln::serving {

int http_status(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAborted:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kCancelled:
      return 499;
    case StatusCode::kInternal:
      break;
  }
  return 500;
}

std::string error_body(const std::string& message) {
  // Messages quote request bytes, which need not be UTF-8: replaced, never a throw.
  Json body = {{"error", message_for_client(message)}};
  return body.dump() + "\n";
}

}  // namespace kiln::serving
