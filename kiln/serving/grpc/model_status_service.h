#pragma once
// TensorFlow Serving's ModelService over kiln's model table:
// GetModelStatus, every version of a model (newest first) or the one its spec names, each
// AVAILABLE. HandleReloadConfigRequest is not in kiln's copy of the service (kiln reloads by
// watching the versions' folders): the server answers it UNIMPLEMENTED, as any path it does not
// serve.
// Thread-safety: its handler runs on the event loops' threads, several at once.

#include "kiln/serving/grpc/grpc_call.h"
#include "kiln/serving/grpc/method_call.h"
#include "tensorflow_serving/apis/get_model_status.pb.h"

namespace kiln::serving {

class ModelStatusService {
 public:
  explicit ModelStatusService(CallContext shared) : shared_(shared) {}

  /// Adds the service's method, by path, to what the server serves.
  void add_methods(GrpcMethods& methods) const;

  void status(GrpcCall& call, const tensorflow::serving::GetModelStatusRequest& request,
              tensorflow::serving::GetModelStatusResponse& response) const;

 private:
  CallContext shared_;
};

}  // namespace kiln::serving
