#pragma once
// TensorFlow Serving's ModelService over kiln's model table, on gRPC's asynchronous API:
// GetModelStatus, every version of a model (newest first) or the one its spec names, each
// AVAILABLE. HandleReloadConfigRequest is not in kiln's copy of the service (kiln reloads by
// watching the versions' folders): gRPC answers it UNIMPLEMENTED.
// Thread-safety: its handler runs on the completion queue's threads, several at once.

#include "kiln/serving/grpc/grpc_call.h"
#include "tensorflow_serving/apis/model_service.grpc.pb.h"

namespace kiln::serving {

class ModelStatusService {
 public:
  explicit ModelStatusService(CallContext shared) : shared_(shared) {}

  /// What the server registers.
  grpc::Service* service() { return &service_; }
  /// Asks for the first call on `queue`; each call asks for the next.
  void await_calls(grpc::ServerCompletionQueue* queue);

  void status(GrpcCall& call, const tensorflow::serving::GetModelStatusRequest& request,
              tensorflow::serving::GetModelStatusResponse& response) const;

 private:
  CallContext shared_;
  tensorflow::serving::ModelService::AsyncService service_;
};

}  // namespace kiln::serving
