#pragma once
// One client connection of kiln's gRPC server, without its socket: the HTTP/2 that a gRPC channel
// speaks (nghttp2's server session: frames, HPACK, flow control, pings, GOAWAY) turned into whole
// unary calls, and answers turned back into a response's headers, message and trailers. Bytes
// come in through receive() and go out through produce(), so that the event loop owns the socket
// and a fuzz target can drive it alone.
//
// Why not gRPC's own server: its core took a third of the server's time per call (its completion
// queue, its filters, a hand-over of writes to its executor thread), and gRPC served fewer calls a
// second than the REST API on kiln's HTTP/1.1 loop (docs/benchmarks.md, gRPC).
//
// What a call must be (PROTOCOL-HTTP2): a POST (else HTTP 405) of content-type application/grpc
// (else HTTP 415, so that a plain HTTP client does not read a gRPC error as a success), carrying
// one message (grpc_wire.h). Requests are bounded before they are kept: headers by
// max_header_bytes, a stream's body by the message limit, the requests a connection is still
// receiving by four times it.
// Thread-safety: none; one thread (the loop's) uses a connection.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/net/abandoned.h"
#include "kiln/net/grpc_wire.h"

namespace kiln::net {

struct GrpcLimits {
  size_t max_message_bytes = 16 << 20;  // one request message, inflated
  size_t max_header_bytes = 64 << 10;   // one request's header block, names and values
  uint32_t max_streams = 256;           // calls open at once (SETTINGS_MAX_CONCURRENT_STREAMS)
  // Request bytes still arriving that all the connections sharing `server_held` may hold together
  // (one connection holds four messages' worth at most); none shared: this connection's alone.
  size_t max_server_held_bytes = size_t(256) << 20;
  std::shared_ptr<std::atomic<size_t>> server_held;
  // Answers not yet taken by their clients that all the connections sharing `server_unsent` may
  // hold together; past it, an answer is RESOURCE_EXHAUSTED instead (240 clients that read their
  // answers slowly took a server to 3.4 GB). None shared: no cap.
  size_t max_server_unsent_bytes = size_t(256) << 20;
  std::shared_ptr<std::atomic<size_t>> server_unsent;
  // What a call's deadline (`grpc-timeout`) counts from: the time its headers came.
  std::function<std::chrono::steady_clock::time_point()> now = std::chrono::steady_clock::now;
};

/// One call, received whole.
struct GrpcIncoming {
  int32_t stream = 0;
  std::string path;                        // "/tensorflow.serving.PredictionService/Predict"
  std::vector<std::string> authorization;  // each value of the header, in order
  std::string message;                     // the request message, unframed and inflated
  std::optional<std::chrono::nanoseconds> timeout;  // `grpc-timeout`: the client's deadline
  std::optional<std::chrono::steady_clock::time_point> deadline;  // its headers' time + timeout
  Abandoned abandoned;  // set once its stream is reset, past its deadline, or its connection gone
};

/// The answer to one call: OK with a message, or a status.
struct GrpcOutgoing {
  int32_t stream = 0;
  int code = 0;          // gRPC's status code
  std::string error;     // grpc-message, when code is not 0
  std::string response;  // the response message, when code is 0
};

class GrpcConnection {
 public:
  /// Called for each call received whole, during receive(); its answer comes later, by answer().
  using OnCall = std::function<void(GrpcIncoming& call)>;

  GrpcConnection(GrpcLimits limits, OnCall on_call);
  ~GrpcConnection();
  GrpcConnection(const GrpcConnection&) = delete;
  GrpcConnection& operator=(const GrpcConnection&) = delete;

  /// Takes bytes the client sent; false when the connection is beyond saving (not HTTP/2, or a
  /// protocol error): what produce() still gives (a GOAWAY saying why) goes out, then it closes.
  bool receive(const char* data, size_t size);
  /// Answers a call; dropped when its stream has gone (the client cancelled it).
  void answer(GrpcOutgoing outgoing);
  /// Appends what is ready to send to `out`, while `out` holds less than `most` bytes.
  void produce(std::string& out, size_t most);
  /// Says no new calls are taken (GOAWAY); the calls received are still answered.
  void shut_down();
  /// For a client that has sent nothing for the server's read timeout: each call whose request is
  /// still arriving is answered DEADLINE_EXCEEDED saying `why`, and no new calls are taken.
  void time_out(const std::string& why);
  /// For a call past its client's deadline (`grpc-timeout`): answered DEADLINE_EXCEEDED now;
  /// its answer, when it comes, is dropped (it still counts as unanswered until then).
  void expire(int32_t stream);
  /// Each call whose request is still arriving past its client's deadline (`grpc-timeout`, from
  /// its headers' time) is answered DEADLINE_EXCEEDED, and what came of it is let go. Whether any.
  bool expire_arriving(std::chrono::steady_clock::time_point now);
  /// Whether the connection has nothing more to do: the client has gone or may close it.
  bool finished() const;
  /// Calls received and not yet answered.
  size_t unanswered() const { return unanswered_; }
  /// Whether frames are ready to go to the client (answers not yet produced by produce()).
  bool wants_to_send() const;
  /// Calls whose request is still arriving.
  size_t arriving() const;
  /// Bytes of requests still arriving, and of answers not yet taken by the client.
  size_t held_bytes() const { return held_bytes_; }
  size_t unsent_bytes() const { return unsent_bytes_; }
  /// Counts the client's frames of calls (HEADERS and DATA) and the requests come whole: what
  /// the server's timeouts watch, as pings and settings alone keep no connection.
  uint64_t call_frames() const { return call_frames_; }
  uint64_t requests_received() const { return requests_received_; }

 private:
  struct Stream;
  struct Callbacks;
  void end_request(int32_t stream_id, Stream& stream);
  void take_deadline(int32_t stream_id, Stream& stream);
  /// Answers RESOURCE_EXHAUSTED once the stream's prefix declares a message over the limit.
  void refuse_declared_too_large(int32_t stream_id, Stream& stream);
  void respond(int32_t stream_id, Stream& stream, const GrpcOutgoing& outgoing);
  void respond_status(int32_t stream_id, int http_status, int code, const std::string& error);
  /// Whether `size` more request bytes may be held, here and by the server; answers the stream
  /// RESOURCE_EXHAUSTED naming the limit when not.
  bool may_hold(int32_t stream_id, size_t size);
  void hold(size_t size);
  void release(size_t size);
  /// Counts an answer's bytes until the client has taken them; false (nothing counted) when the
  /// server holds as many as it may.
  bool may_send(size_t size);
  void sent(size_t size);

  GrpcLimits limits_;
  OnCall on_call_;
  struct Session;
  std::unique_ptr<Session> session_;
  std::unordered_map<int32_t, std::unique_ptr<Stream>> streams_;
  size_t held_bytes_ = 0;    // request bytes of the calls still coming in
  size_t unsent_bytes_ = 0;  // answer bytes counted and not yet produced
  size_t unanswered_ = 0;
  uint64_t call_frames_ = 0, requests_received_ = 0;
  int32_t last_stream_ = -1;  // the last one taken, once shut down
  bool failed_ = false;
};

}  // namespace kiln::net
