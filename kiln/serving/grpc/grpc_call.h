#pragma once
// One call of kiln's gRPC services on gRPC's asynchronous API: it checks the bearer token
// (metadata `authorization: Bearer TOKEN`, as the REST API's header), lets the call in through the
// server's gate (refused UNAVAILABLE while draining), and once answered counts it in the server's
// metrics and lets it out. Failures become gRPC statuses with TensorFlow Serving's codes and its
// cut of messages over 1024 characters.
// Thread-safety: proceed() runs on a completion queue's thread; finish_with() may be called from
// any thread (a batcher's), once.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "kiln/serving/listener.h"

namespace kiln::serving {

/// What every call shares: the server's parts, the token asked for, and the count of calls
/// received and not yet done with (which the server waits on at its shutdown).
struct CallContext {
  ServingParts parts;
  std::string token;  // empty: none asked for
  RequestGate* live;
};

/// The gRPC status of the exception being handled (a ServingError's code, INVALID_ARGUMENT for
/// bad data, INTERNAL for anything else).
grpc::Status current_error_status();

/// One call, from the completion queue's tag that says it came to the one that says its answer
/// went out (async_call.h makes them, one method each).
class GrpcCall {
 public:
  virtual ~GrpcCall();

  /// What the completion queue says of the call's latest operation (the call is its tag).
  virtual void proceed(bool ok) = 0;

  /// Runs `body` if the call may proceed (a token it bears, a server not draining), else
  /// answers it with why; an exception `body` throws answers it with its status. A body that
  /// returns without answering leaves the call to whoever it handed it to.
  void start(const std::function<void()>& body);
  /// Names the model the call is for (its metrics count under it once it is found served).
  void set_model(const std::string& model) { model_ = model; }
  /// Keeps `servable` until the call is done with, which is on a completion queue's thread: a
  /// version retired while it ran must not be destroyed on its own batcher's thread, which its
  /// destructor joins.
  void hold(std::shared_ptr<const void> servable) { hold_ = std::move(servable); }
  /// Answers the call: OK when `fill` (which writes the response) returns, else the status of
  /// what it threw.
  void finish_with(const std::function<void()>& fill);

 protected:
  /// A call of `api` (predict, classify, regress, metadata, status).
  GrpcCall(const CallContext& shared, std::string api) : shared_(shared), api_(std::move(api)) {}
  /// The call has come: its clock starts and the server counts it until it is destroyed. False
  /// when the server is stopping: the call is then dropped unanswered (its server cancels it).
  bool received();
  const CallContext& shared() const { return shared_; }
  const std::string& api() const { return api_; }
  /// The context of the call, for its metadata.
  virtual const grpc::ServerContext& server_context() const = 0;
  /// Sends the answer with `status`; the completion queue says when it went out.
  virtual void send(grpc::Status status) = 0;

 private:
  bool authorized() const;
  void finish(grpc::Status status);

  CallContext shared_;
  std::string api_, model_;
  std::chrono::steady_clock::time_point start_;
  std::shared_ptr<const void> hold_;
  bool received_ = false, entered_ = false;
};

}  // namespace kiln::serving
