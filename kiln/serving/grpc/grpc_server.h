#pragma once
// kiln serve's gRPC port: a gRPC server of TensorFlow Serving's PredictionService and
// ModelService over a ModelServer's parts, on gRPC's own threads. It binds in its constructor
// (SO_REUSEPORT off, so a port in use is an error, not a second server sharing it) and takes
// requests up to the message size given.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <memory>
#include <mutex>
#include <string>

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
  void serve() override { server_->Wait(); }
  void stop() override;

 private:
  HoldReleaser releaser_;  // first: calls release their versions until the server is gone
  PredictionService prediction_;
  ModelStatusService status_;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
  std::once_flag stopped_;
};

}  // namespace kiln::serving
