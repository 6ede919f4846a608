#pragma once
// One call of kiln's gRPC services, as the reactor gRPC's callback API answers it with: it checks
// the bearer token (metadata `authorization: Bearer TOKEN`, as the REST API's header), lets the
// call in through the server's gate (refused UNAVAILABLE while draining), and once answered counts
// it in the server's metrics and lets it out. Failures become gRPC statuses with TensorFlow
// Serving's codes and its cut of messages over 1024 characters.
// Thread-safety: finish() may be called from any thread, once.

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "kiln/serving/listener.h"

namespace kiln::serving {

/// Releases the versions that answered calls on a thread of its own: a version retired while a
/// call ran must not be destroyed on its own batcher's thread, which its destructor joins.
class HoldReleaser {
 public:
  HoldReleaser();
  /// Releases what is left, then stops its thread.
  ~HoldReleaser();
  void release(std::shared_ptr<const void> hold);

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<const void>> held_;
  bool stopping_ = false;
  std::thread thread_;
};

/// What every call shares: the server's parts, the token asked for, and the releaser.
struct CallContext {
  ServingParts parts;
  std::string token;  // empty: none asked for
  HoldReleaser* releaser;
};

/// The gRPC status of the exception being handled (a ServingError's code, INVALID_ARGUMENT for
/// bad data, INTERNAL for anything else).
grpc::Status current_error_status();

class GrpcCall : public grpc::ServerUnaryReactor {
 public:
  /// A call of `api` (predict, classify, regress, metadata, status).
  GrpcCall(grpc::CallbackServerContext* context, const CallContext& shared, std::string api);

  /// Runs `body` if the call may proceed (a token it bears, a server not draining), else
  /// finishes it with why; an exception `body` throws finishes it with its status. A body that
  /// returns without finishing leaves the call to whoever it handed it to.
  void start(const std::function<void()>& body);
  /// Names the model the call is for (its metrics count under it once it is found served).
  void set_model(const std::string& model) { model_ = model; }
  /// Keeps `servable` until the call is answered, then releases it off the caller's thread.
  void hold(std::shared_ptr<const void> servable) { hold_ = std::move(servable); }
  /// Answers the call: OK when `fill` (which writes the response) returns, else the status of
  /// what it threw.
  void finish_with(const std::function<void()>& fill);

 private:
  void OnDone() override { delete this; }
  bool authorized() const;
  void finish(grpc::Status status);

  grpc::CallbackServerContext* context_;
  CallContext shared_;
  std::string api_, model_;
  std::chrono::steady_clock::time_point start_;
  std::shared_ptr<const void> hold_;
  bool entered_ = false;
};

}  // namespace kiln::serving
