#pragma once
// TensorFlow Serving's ModelService over kiln's model table: GetModelStatus, every version of a
// model (newest first) or the one its spec names, each AVAILABLE. HandleReloadConfigRequest is
// not served (kiln reloads by watching the versions' folders): gRPC answers it UNIMPLEMENTED.
// Thread-safety: gRPC calls it from any of its threads.

#include "kiln/serving/grpc/grpc_call.h"
#include "tensorflow_serving/apis/model_service.grpc.pb.h"

namespace kiln::serving {

class ModelStatusService final : public tensorflow::serving::ModelService::CallbackService {
 public:
  explicit ModelStatusService(CallContext shared) : shared_(shared) {}

  grpc::ServerUnaryReactor* GetModelStatus(
      grpc::CallbackServerContext* context,
      const tensorflow::serving::GetModelStatusRequest* request,
      tensorflow::serving::GetModelStatusResponse* response) override;

 private:
  CallContext shared_;
};

}  // namespace kiln::serving
