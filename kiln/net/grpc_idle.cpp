#include "kiln/net/grpc_idle.h"

#include <fmt/format.h>

namespace kiln::net {

std::optional<std::string> grpc_idle_reason(const GrpcConnectionTimes& times,
                                            const GrpcConnectionLoad& load,
                                            GrpcClock::time_point now, GrpcTimeouts timeouts) {
  // A slow model is not the client's fault, nor a client still taking what it was answered.
  if (load.unanswered > 0) return std::nullopt;
  if (load.sending && now - times.last_taken < timeouts.read) return std::nullopt;
  if (now - times.last_activity >= timeouts.read)
    return fmt::format(
        "the call's request did not arrive whole within the server's read timeout ({} s "
        "without a byte)",
        timeouts.read.count());
  if (load.arriving == 0 && now - times.last_call >= timeouts.read)
    return fmt::format("no call began within the server's read timeout ({} s)",
                       timeouts.read.count());
  if (times.arriving_since && now - *times.arriving_since >= timeouts.request)
    return fmt::format(
        "the call's request did not arrive whole within the server's request timeout ({} s "
        "from its first byte)",
        timeouts.request.count());
  return std::nullopt;
}

}  // namespace kiln::net
