#pragma once
// kiln serve's gRPC port: TensorFlow Serving's PredictionService and ModelService over a
// ModelServer's parts, spoken over kiln's own gRPC event loops (grpc_event_loop.h, on nghttp2's
// HTTP/2), `threads` of them sharing the listening socket. It binds in its constructor (a port in
// use is an error, not a second server sharing it) and takes requests up to the message size
// given. Paths it does not serve are answered UNIMPLEMENTED.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/net/grpc_event_loop.h"
#include "kiln/serving/grpc/grpc_front.h"
#include "kiln/serving/grpc/method_call.h"
#include "kiln/serving/grpc/model_status_service.h"
#include "kiln/serving/grpc/prediction_service.h"

namespace kiln::serving {

class GrpcServer final : public Listener {
 public:
  GrpcServer(ServingParts parts, const GrpcOptions& options);
  ~GrpcServer() override;

  int port() const override { return port_; }
  std::string address() const override;
  /// Runs the event loops, one on this thread, until stop().
  void serve() override;
  /// Stops taking calls (GOAWAY), waits for those received to be answered (the server's drain
  /// came first) and sent, then ends serve().
  void stop() override;

 private:
  void handle(net::GrpcIncoming& call, net::GrpcReply reply) const;

  RequestGate live_;  // first: the calls count themselves here until they are destroyed
  PredictionService prediction_;
  OffLoopWorkers preparing_;  // after the service its work calls, ended before it
  ModelStatusService status_;
  GrpcMethods methods_;
  std::string host_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::unique_ptr<net::GrpcEventLoop>> loops_;
  std::once_flag stopped_;
};

}  // namespace kiln::serving
