#pragma once
// A call of one unary method on gRPC's asynchronous API (a completion queue that kiln's own
// threads poll; gRPC starts no thread of its own to run handlers): asked for from gRPC as the
// method's next call, handled when it comes (while the next one is asked for), answered from
// whichever thread finishes it, and deleted when the queue says the answer went out, or that the
// server shut down before a call came.
// Thread-safety: as grpc_call.h.

#include <functional>
#include <string>
#include <utility>

#include "kiln/serving/grpc/grpc_call.h"

namespace kiln::serving {

template <class Request, class Response>
class AsyncCall final : public GrpcCall {
 public:
  /// Asks gRPC for the method's next call into the given context, request and writer, with the
  /// call as its tag (a generated AsyncService's RequestX bound to its queues).
  using Ask = std::function<void(grpc::ServerContext*, Request*,
                                 grpc::ServerAsyncResponseWriter<Response>*, void* tag)>;
  /// Handles a call that came: answers it, now or later (GrpcCall::finish_with).
  using Handle = std::function<void(GrpcCall& call, const Request&, Response&)>;

  /// Waits for the method's next call; the object deletes itself.
  static void await(const CallContext& shared, const std::string& api, Ask ask, Handle handle) {
    new AsyncCall(shared, api, std::move(ask), std::move(handle));
  }

  void proceed(bool ok) override {
    // The answer went out; the server shut down before a call came; or it is stopping, and no
    // call is asked for or answered on its queue any more.
    if (sent_ || !ok || !received()) {
      delete this;
      return;
    }
    await(shared(), api(), ask_, handle_);  // the method's next call
    start([this] { handle_(*this, request_, response_); });
  }

 private:
  AsyncCall(const CallContext& shared, const std::string& api, Ask ask, Handle handle)
      : GrpcCall(shared, api),
        ask_(std::move(ask)),
        handle_(std::move(handle)),
        writer_(&context_) {
    ask_(&context_, &request_, &writer_, this);
  }
  const grpc::ServerContext& server_context() const override { return context_; }
  void send(grpc::Status status) override {
    sent_ = true;
    writer_.Finish(response_, status, this);
  }

  Ask ask_;
  Handle handle_;
  grpc::ServerContext context_;
  Request request_;
  Response response_;
  grpc::ServerAsyncResponseWriter<Response> writer_;
  bool sent_ = false;  // set before Finish; read once the queue says it went out
};

/// Waits for the calls of one method of `service` (a generated AsyncService): `ask` is its
/// RequestX, `handle` the member of `owner` that handles a call; both on `queue`.
template <class Service, class Method, class Request, class Response, class Owner>
void await_method(const CallContext& shared, const std::string& api, Service* service,
                  grpc::ServerCompletionQueue* queue,
                  void (Method::*ask)(grpc::ServerContext*, Request*,
                                      grpc::ServerAsyncResponseWriter<Response>*,
                                      grpc::CompletionQueue*, grpc::ServerCompletionQueue*, void*),
                  const Owner* owner,
                  void (Owner::*handle)(GrpcCall&, const Request&, Response&) const) {
  AsyncCall<Request, Response>::await(
      shared, api,
      [service, queue, ask](grpc::ServerContext* context, Request* request,
                            grpc::ServerAsyncResponseWriter<Response>* writer, void* tag) {
        (service->*ask)(context, request, writer, queue, queue, tag);
      },
      [owner, handle](GrpcCall& call, const Request& request, Response& response) {
        (owner->*handle)(call, request, response);
      });
}

}  // namespace kiln::serving
