#pragma once
// `kiln predict --server grpc://HOST:PORT/v1/models/NAME[/versions/N | /labels/L]`: the REST
// client's lines and report (predict_client.h), over TensorFlow Serving's gRPC API. A kiln built
// without gRPC (cmake -DKILN_GRPC=OFF) refuses it with a UsageError (serving/grpc_off/).
// Thread-safety: one run per call.

#include "kiln/serving/client/predict_client.h"

namespace kiln::serving {

/// Each line of the input sent as a Predict call, with the tensors its instance gives as the
/// model's metadata types them; the answers written as the REST client writes them.
ClientReport run_grpc_client(const ClientOptions& options);

}  // namespace kiln::serving
