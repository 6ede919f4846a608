#pragma once
// kiln's gRPC API (TensorFlow Serving's) as kiln's commands use it, free of gRPC's headers and of
// the generated code: the listener `kiln serve --grpc-port` adds to its ModelServer (its client,
// `kiln predict --server grpc://`, is serving/client/grpc_client.h). A kiln built without gRPC
// (cmake -DKILN_GRPC=OFF) has it, refusing with a UsageError (serving/grpc_off/).
// Thread-safety: as listener.h.

#include <cstdint>
#include <string>

#include "kiln/serving/listener.h"

namespace kiln::serving {

struct GrpcOptions {
  std::string host = "127.0.0.1";
  int port = 8500;                       // 0 picks a free one
  std::string token;                     // non-empty: calls need `authorization: Bearer TOKEN`
  int64_t max_message_bytes = 16 << 20;  // one request, at most
  int64_t max_rows = 1024;               // examples in one request, at most
  int threads = 1;                       // event loops, each taking connections of its own
  int max_connections = 4096;            // open at once over every loop; more are closed
  int read_timeout_seconds = 10;         // a client silent this long, with no call in work, goes
  int request_timeout_seconds = 30;      // a call's request arrives whole within this
  int64_t max_pending_bytes = int64_t(256) << 20;  // request bytes still arriving, all clients
  int readers = 1;  // threads reading requests that expand to 64 KiB or more, off the loops
};

/// Makes the gRPC listener of a ModelServer (PredictionService and ModelService), bound when the
/// server makes it: UsageError when the port cannot be had.
ListenerFactory grpc_listener(GrpcOptions options);

/// Whether this kiln was built with gRPC.
bool grpc_built();

}  // namespace kiln::serving
