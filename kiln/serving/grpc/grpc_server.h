#pragma once
// kiln serve's gRPC port: a gRPC server of TensorFlow Serving's PredictionService and
// ModelService over a ModelServer's parts, on gRPC's asynchronous API with one completion queue
// that serve() polls on `threads` threads (gRPC starts none to run handlers, so a call costs no
// hand-over to a thread of gRPC's before the batcher's). It binds in its constructor (SO_REUSEPORT
// off, so a port in use is an error, not a second server sharing it) and takes requests up to
// the message size given.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "kiln/serving/grpc/grpc_front.h"
#include "kiln/serving/grpc/model_status_service.h"
#include "kiln/serving/grpc/prediction_service.h"

namespace kiln::serving {

class GrpcServer final : public Listener {
 public:
  GrpcServer(ServingParts parts, const GrpcOptions& options);
  ~GrpcServer() override;

  int port() const { return port_; }
  std::string address() const override;
  /// Polls the queue on this thread and threads - 1 more, until stop().
  void serve() override;
  /// Stops taking calls, waits for those received to be answered (the server's drain came
  /// first), then ends serve().
  void stop() override;

 private:
  void poll();

  RequestGate live_;  // first: the calls count themselves here until they are destroyed
  PredictionService prediction_;
  ModelStatusService status_;
  std::string host_;
  int port_ = 0;
  int threads_ = 1;
  std::unique_ptr<grpc::ServerCompletionQueue> queue_;
  std::unique_ptr<grpc::Server> server_;
  std::once_flag stopped_;
  std::mutex mutex_;
  bool polled_ = false;  // by serve(); else the destructor drains the queue
};

}  // namespace kiln::serving
