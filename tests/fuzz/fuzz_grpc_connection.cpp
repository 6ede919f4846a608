// The bytes a gRPC client sends `kiln serve --grpc-port` on one connection
// (net/grpc_connection.cpp over nghttp2's server session, and grpc_wire.cpp's framing):
// the first byte picks how they are fed (whether the HTTP/2 client preface goes first, the size of
// the pieces, whether the server shuts down halfway, whether calls are answered as they come or
// all at the end, newest first); the rest is what the client sends. Any bytes give calls or a
// closed connection, never a crash: every call received is answered, what the server sends stays
// bounded by what it was asked, and a call's message is never over the limit.

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "kiln/net/grpc_connection.h"

namespace {

constexpr char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint8_t how = data[0];
  std::string client = how & 1 ? std::string(kPreface) : "";
  client.append(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t piece = size_t(1) << ((how >> 1) & 7);  // 1 to 128 bytes at a time
  bool shut_halfway = how & 16, answer_at_once = how & 32;

  kiln::net::GrpcLimits limits;
  limits.max_message_bytes = 256;
  limits.max_header_bytes = 512;
  limits.max_streams = 8;
  std::vector<kiln::net::GrpcIncoming> calls;
  kiln::net::GrpcConnection* self = nullptr;
  auto answer = [&self](const kiln::net::GrpcIncoming& call) {
    kiln::net::GrpcOutgoing outgoing;
    outgoing.stream = call.stream;
    outgoing.code = call.message.size() % 2 ? 3 : 0;  // errors and answers both
    outgoing.error = "odd \xff% " + call.path;
    outgoing.response = call.message;
    self->answer(outgoing);
  };
  kiln::net::GrpcConnection connection(limits, [&](kiln::net::GrpcIncoming& call) {
    if (call.message.size() > limits.max_message_bytes) std::abort();
    if (answer_at_once)
      answer(call);
    else
      calls.push_back(call);
  });
  self = &connection;
  std::string out;
  for (size_t at = 0; at < client.size(); at += piece) {
    if (shut_halfway && at >= client.size() / 2 && at < client.size() / 2 + piece)
      connection.shut_down();
    bool open = connection.receive(client.data() + at, std::min(piece, client.size() - at));
    out.clear();
    connection.produce(out, 4096);
    if (!open) break;
  }
  for (auto call = calls.rbegin(); call != calls.rend(); ++call) answer(*call);
  if (connection.unanswered() != 0) std::abort();
  for (int round = 0; round < 64 && !connection.finished(); ++round) {
    out.clear();
    connection.produce(out, 4096);
    if (out.empty()) break;
  }
  return 0;
}
