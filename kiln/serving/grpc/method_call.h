#pragma once
// The calls of one unary method of kiln's gRPC services: each request the event loop receives for
// the method's path becomes a call holding its request and response messages, handed to the
// service's member that handles it; the call answers from whichever thread finishes it and then
// deletes itself (grpc_call.h).
// Thread-safety: as grpc_call.h; a GrpcMethods table is read by the loops, never changed once
// the server is made.

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/serving/grpc/grpc_call.h"

namespace kiln::serving {

/// What the server does with a call of one path.
using GrpcMethod = std::function<void(net::GrpcIncoming& incoming, net::GrpcReply reply)>;
/// Every method served, by path: "/tensorflow.serving.PredictionService/Predict".
using GrpcMethods = std::unordered_map<std::string, GrpcMethod>;

template <class Request, class Response>
class MethodCall final : public GrpcCall {
 public:
  /// Handles a call that came: answers it, now or later (GrpcCall::finish_with).
  using Handle = std::function<void(GrpcCall& call, const Request&, Response&)>;

  /// Makes the call of `incoming` and runs `handle` on it; the call deletes itself once answered.
  static void run(const CallContext& shared, const std::string& api, net::GrpcIncoming& incoming,
                  net::GrpcReply reply, const Handle& handle) {
    auto* call = new MethodCall(shared, api, incoming, std::move(reply));
    call->begin(incoming.message,
                [call, &handle] { handle(*call, call->request_, call->response_); });
  }

 private:
  MethodCall(const CallContext& shared, const std::string& api, net::GrpcIncoming& incoming,
             net::GrpcReply reply)
      : GrpcCall(shared, api, incoming, std::move(reply)) {}
  bool parse(const std::string& message) override { return request_.ParseFromString(message); }
  std::string request_type() const override { return Request::descriptor()->full_name(); }
  std::string serialized_response() const override { return response_.SerializeAsString(); }

  Request request_;
  Response response_;
};

/// Serves `path` (one method of `owner`'s service) with `handle`, a member of `owner`.
template <class Request, class Response, class Owner>
void add_method(GrpcMethods& methods, const std::string& path, const CallContext& shared,
                const std::string& api, const Owner* owner,
                void (Owner::*handle)(GrpcCall&, const Request&, Response&) const) {
  using Call = MethodCall<Request, Response>;
  typename Call::Handle handler = [owner, handle](GrpcCall& call, const Request& request,
                                                  Response& response) {
    (owner->*handle)(call, request, response);
  };
  methods[path] = [shared, api, handler](net::GrpcIncoming& incoming, net::GrpcReply reply) {
    Call::run(shared, api, incoming, std::move(reply), handler);
  };
}

}  // namespace kiln::serving
