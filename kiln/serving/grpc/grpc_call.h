#pragma once
// One call of kiln's gRPC services, from the request its event loop received to the answer it
// hands back: it checks the bearer token (metadata `authorization: Bearer TOKEN`, as the REST
// API's header), lets the call in through the server's gate (refused UNAVAILABLE while draining),
// and once answered counts it in the server's metrics and lets it out. Failures become gRPC
// statuses with TensorFlow Serving's codes and its cut of messages over 1024 characters.
// Thread-safety: begun on the event loop's thread; finish_with() may be called from any thread
// (a batcher's), once.

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "kiln/net/grpc_event_loop.h"
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

/// One call, made as it comes (method_call.h makes them, one method each) and deleted once its
/// answer is handed to its event loop.
class GrpcCall {
 public:
  virtual ~GrpcCall();

  /// Names the model the call is for (its metrics count under it once it is found served).
  void set_model(const std::string& model) { model_ = model; }
  /// Keeps `servable` until the answer is taken, which is on the event loop's thread: a version
  /// retired while it ran must not be destroyed on its own batcher's thread, which its destructor
  /// joins.
  void hold(std::shared_ptr<const void> servable) { hold_ = std::move(servable); }
  /// Answers the call: OK when `fill` (which writes the response) returns, else the status of
  /// what it threw.
  void finish_with(const std::function<void()>& fill);
  /// Set once the client no longer waits for the answer (net/abandoned.h).
  const net::Abandoned& abandoned() const { return abandoned_; }

 protected:
  /// A call of `api` (predict, classify, regress, metadata, status) as `incoming` came (its
  /// authorization and abandon mark are taken; its message is read by begin()), answered
  /// through `reply`.
  GrpcCall(const CallContext& shared, std::string api, net::GrpcIncoming& incoming,
           net::GrpcReply reply)
      : shared_(shared),
        api_(std::move(api)),
        authorization_(std::move(incoming.authorization)),
        abandoned_(std::move(incoming.abandoned)),
        reply_(std::move(reply)) {}
  /// Runs `body` on the request read from `message` if the call may proceed (a token it bears, a
  /// server not draining, a message that parses), else answers it with why; an exception `body`
  /// throws answers it with its status. A body that returns without answering leaves the call
  /// to whoever it handed it to.
  void begin(const std::string& message, const std::function<void()>& body);
  /// Reads the request message; false when it does not parse.
  virtual bool parse(const std::string& message) = 0;
  /// What the request should have been, for the message when it does not parse.
  virtual std::string request_type() const = 0;
  /// The response message's bytes, once written.
  virtual std::string serialized_response() const = 0;

 private:
  bool authorized() const;
  void finish(grpc::Status status);
  /// Hands the answer to the event loop and deletes the call.
  void send(const grpc::Status& status);

  CallContext shared_;
  std::string api_;
  std::vector<std::string> authorization_;
  net::Abandoned abandoned_;
  std::string model_;
  net::GrpcReply reply_;
  std::chrono::steady_clock::time_point start_;
  std::shared_ptr<const void> hold_;
  bool received_ = false, entered_ = false;
};

}  // namespace kiln::serving
