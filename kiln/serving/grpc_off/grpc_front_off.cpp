// serving/grpc/grpc_front.h and serving/client/grpc_client.h in a kiln built without gRPC (cmake
// -DKILN_GRPC=OFF, as the GPU build has it): both ways in are refused, saying why.

#include "kiln/core/error.h"
#include "kiln/serving/client/grpc_client.h"
#include "kiln/serving/grpc/grpc_front.h"

namespace kiln::serving {
namespace {

constexpr const char* kNoGrpc =
    "this kiln was built without gRPC (cmake -DKILN_GRPC=OFF); rebuild with gRPC's C++ library "
    "(scripts/install-deps.sh) for --grpc-port and grpc:// servers, or use the REST API";

}  // namespace

ListenerFactory grpc_listener(GrpcOptions) { throw UsageError(kNoGrpc); }

bool grpc_built() { return false; }

ClientReport run_grpc_client(const ClientOptions&) { throw UsageError(kNoGrpc); }

}  // namespace kiln::serving
