#pragma once
// When a gRPC connection has waited on its client too long (grpc_event_loop.h): the three ways
// a connection with no call at the model goes, as a pure function of its times, so that each
// rule can be shown with a clock of the test's own. A connection whose answers are still going
// out to a client that takes them is kept, however long ago it last sent: 20 clients of 250
// calls each, reading their 10 MB of answers slower than the read timeout, lost every answer
// the socket had not taken yet to a GOAWAY.
// Thread-safety: a pure function.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace kiln::net {

using GrpcClock = std::chrono::steady_clock;

struct GrpcConnectionTimes {
  GrpcClock::time_point last_activity;  // the client's last bytes, or the server's last answer
  GrpcClock::time_point last_call;      // the client's last frame of a call, or the last answer
  GrpcClock::time_point last_taken;     // the client's last taking of bytes the server sent
  std::optional<GrpcClock::time_point> arriving_since;  // requests arriving, none whole since
};

struct GrpcConnectionLoad {
  size_t unanswered = 0;  // calls with the model
  size_t arriving = 0;    // calls whose request is still coming
  bool sending = false;   // bytes for the client not yet written to its socket
};

struct GrpcTimeouts {
  std::chrono::seconds read{10};
  std::chrono::seconds request{30};
};

/// Why the connection is to be dropped at `now`, for its calls' DEADLINE_EXCEEDED and the log;
/// none while it may stay.
std::optional<std::string> grpc_idle_reason(const GrpcConnectionTimes& times,
                                            const GrpcConnectionLoad& load,
                                            GrpcClock::time_point now, GrpcTimeouts timeouts);

}  // namespace kiln::net
