#include "kiln/serving/grpc/grpc_call.h"

#include <utility>

#include "kiln/core/error.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kTokenNeeded =
    "this server needs one metadata entry `authorization: Bearer TOKEN` (--token-file)";

// TensorFlow Serving's status codes are gRPC's, one for one.
constexpr std::pair<StatusCode, grpc::StatusCode> kCodes[] = {
    {StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
    {StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
    {StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
    {StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
    {StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
    {StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
    {StatusCode::kAborted, grpc::StatusCode::ABORTED},
    {StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
    {StatusCode::kInternal, grpc::StatusCode::INTERNAL},
    {StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
    {StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
    {StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
    {StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
};

grpc::StatusCode grpc_code(StatusCode code) {
  for (const auto& [ours, theirs] : kCodes)
    if (ours == code) return theirs;
  return grpc::StatusCode::INTERNAL;
}

// The HTTP status the metrics count a gRPC answer under: the one its code has in the REST API.
int metric_status(const grpc::Status& status) {
  if (status.ok()) return 200;
  for (const auto& [ours, theirs] : kCodes)
    if (theirs == status.error_code()) return http_status(ours);
  return http_status(StatusCode::kInternal);
}

}  // namespace

grpc::Status current_error_status() {
  try {
    throw;
  } catch (const ServingError& e) {
    return grpc::Status(grpc_code(e.code()), e.message());
  } catch (const DataError& e) {  // an image that does not decode, say
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what());
  } catch (const std::exception& e) {
    return grpc::Status(grpc::StatusCode::INTERNAL, e.what());
  }
}

GrpcCall::~GrpcCall() {
  if (received_) shared_.live->leave();
}

void GrpcCall::begin(const std::string& message, const std::function<void()>& body) {
  start_ = std::chrono::steady_clock::now();
  received_ = shared_.live->enter();
  if (!received_)
    return send(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
  if (!authorized()) return finish(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, kTokenNeeded));
  if (!shared_.parts.gate.enter())
    return finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
  entered_ = true;
  if (!parse(message))
    return finish(grpc::Status(grpc::StatusCode::INTERNAL,
                               "the request message does not parse as " + request_type()));
  try {
    body();
  } catch (...) {
    finish(current_error_status());
  }
}

bool GrpcCall::authorized() const {
  // Credentials sent twice are refused, whichever is right, as the REST API refuses them.
  return shared_.token.empty() ||
         (authorization_.size() == 1 && authorization_.front() == "Bearer " + shared_.token);
}

void GrpcCall::finish_with(const std::function<void()>& fill) {
  grpc::Status status;
  try {
    fill();
  } catch (...) {
    status = current_error_status();
  }
  finish(std::move(status));
}

void GrpcCall::finish(grpc::Status status) {
  // Counted before the client has its answer, as the REST API counts; a model not served is
  // counted with the calls that named none, so that made-up names cannot grow the metrics.
  bool served = !model_.empty() && shared_.parts.table.serves(model_);
  shared_.parts.metrics.request(
      served ? model_ : "", served ? api_ : "", metric_status(status),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  bool entered = entered_;
  RequestGate& gate = shared_.parts.gate;
  send(status);  // `this` is gone from here on
  if (entered) gate.leave();
}

void GrpcCall::send(const grpc::Status& status) {
  net::GrpcOutgoing outgoing;
  outgoing.code = int(status.error_code());
  if (status.ok())
    outgoing.response = serialized_response();
  else
    outgoing.error = status.error_message();
  // Handed over before the call leaves the server's count of live calls (in its destructor), so
  // that a server stopping once they are done finds every answer in its loop's inbox.
  reply_(std::move(outgoing), std::move(hold_));
  delete this;
}

}  // namespace kiln::serving
