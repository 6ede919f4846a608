#pragma once
// A way into a ModelServer, one per protocol (rest/rest_listener.h: `kiln serve --port`;
// grpc/grpc_front.h: `--grpc-port`): it answers from the server's model table, lets requests in
// through the server's gate (so that one drain covers every API) and counts them in its metrics.
// It binds its port when made; the server runs serve() on a thread of its own and calls stop()
// once the drain is over.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <functional>
#include <memory>
#include <string>

#include "kiln/serving/held_bytes.h"
#include "kiln/serving/metrics.h"
#include "kiln/serving/model_table.h"
#include "kiln/serving/request_gate.h"

namespace kiln::serving {

class Listener {
 public:
  virtual ~Listener() = default;
  /// Where it listens, for the log: "grpc://127.0.0.1:8500".
  virtual std::string address() const = 0;
  /// The port bound (the one picked, when 0 was asked).
  virtual int port() const = 0;
  /// Answers requests until stop().
  virtual void serve() = 0;
  /// Ends serve(), answering what is still in flight first.
  virtual void stop() = 0;
};

/// What a listener answers from, owned by the ModelServer and outliving its listeners.
struct ServingParts {
  const ModelTable& table;
  RequestGate& gate;
  ServingMetrics& metrics;
  const HeldBytes* held = nullptr;  // the models' budget for requests' inputs, when there is one
  std::function<void(const std::string&)> log;  // what no client is told (a body cut short)
};

/// Makes a listener once the server's models are loaded; it binds its port before returning.
using ListenerFactory = std::function<std::unique_ptr<Listener>(ServingParts parts)>;

}  // namespace kiln::serving
