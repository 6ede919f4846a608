#pragma once
// `kiln serve --port`: TensorFlow Serving's REST API as a ModelServer's listener, the REST
// handler (rest_handler.h) over the HTTP server on its event loop (http_server.h), answering
// from the server's parts as the gRPC listener does.
// Thread-safety: as listener.h.

#include <string>

#include "kiln/serving/listener.h"
#include "kiln/serving/rest/http_server.h"
#include "kiln/serving/rest/rest_handler.h"

namespace kiln::serving {

struct RestListenerOptions {
  std::string host = "127.0.0.1";
  int port = 8501;  // 0 picks a free one
  RestOptions rest;
  HttpOptions http;  // its `log` unset: the server's
};

/// Makes the REST listener of a ModelServer, bound when the server makes it: UsageError when the
/// port cannot be had.
ListenerFactory rest_listener(RestListenerOptions options);

}  // namespace kiln::serving
