#include "kiln/net/grpc_connection.h"

#include <fmt/format.h>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "kiln/core/text_codec.h"

namespace kiln::net {
namespace {

constexpr int32_t kStreamWindow = 1 << 20;  // what one call may send before we read it
constexpr int32_t kConnectionWindow = 16 << 20;

std::string_view view(const uint8_t* bytes, size_t size) {
  return {reinterpret_cast<const char*>(bytes), size};
}

nghttp2_nv header(std::string_view name, std::string_view value) {
  // nghttp2 copies names and values as a frame is submitted, so these may be temporaries.
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

// application/grpc, application/grpc+proto, application/grpc;charset=...: not grpc-web, whose
// framing differs.
bool is_grpc_content_type(std::string_view type) {
  constexpr std::string_view kGrpc = "application/grpc";
  if (type.substr(0, kGrpc.size()) != kGrpc) return false;
  return type.size() == kGrpc.size() || type[kGrpc.size()] == '+' || type[kGrpc.size()] == ';';
}

}  // namespace

struct GrpcConnection::Stream {
  std::string method, path, content_type, encoding, timeout;
  std::vector<std::string> authorization;
  size_t header_bytes = 0;
  bool headers_too_large = false;
  std::string body;       // DATA received
  bool received = false;  // its request came whole (or was refused as it came)
  bool answered = false;  // its response has been submitted
  std::optional<std::chrono::steady_clock::time_point> deadline;  // from `timeout`, at headers
  bool timeout_given = false;  // even empty: an empty one is malformed, not absent
  bool timeout_twice = false;
  std::string reply;  // the framed response message, while it goes out
  size_t reply_sent = 0;
  size_t reply_counted = 0;  // of the server's unsent answer bytes, until it has gone
  AbandonMark abandon;       // set when the stream goes: reset, answered, or its connection closed
  ~Stream() { abandon.set(); }
};

struct GrpcConnection::Session {
  nghttp2_session* session = nullptr;
  ~Session() { nghttp2_session_del(session); }
};

// nghttp2's callbacks, each given the connection as its user data.
struct GrpcConnection::Callbacks {
  static GrpcConnection& self(void* user) { return *static_cast<GrpcConnection*>(user); }

  static Stream* find(GrpcConnection& connection, int32_t stream_id) {
    auto found = connection.streams_.find(stream_id);
    return found == connection.streams_.end() ? nullptr : found->second.get();
  }

  static int begin_headers(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
    GrpcConnection& connection = self(user);
    int32_t stream_id = frame->hd.stream_id;
    // Sent before our GOAWAY reached the client, above the last stream it names: refused, so
    // that the client may retry it elsewhere knowing it was never run.
    if (connection.last_stream_ >= 0 && stream_id > connection.last_stream_)
      return nghttp2_submit_rst_stream(session, NGHTTP2_FLAG_NONE, stream_id,
                                       NGHTTP2_REFUSED_STREAM);
    connection.streams_[stream_id] = std::make_unique<Stream>();
    return 0;
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                       void* user) {
    GrpcConnection& connection = self(user);
    Stream* stream = find(connection, frame->hd.stream_id);
    if (!stream || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;  // trailers: unused
    stream->header_bytes += name_size + value_size;
    if (stream->header_bytes > connection.limits_.max_header_bytes) {
      stream->headers_too_large = true;
      return 0;
    }
    std::string_view key = view(name, name_size);
    if (key == "authorization") {  // each kept: the call decides what a repeated one means
      stream->authorization.emplace_back(view(value, value_size));
      return 0;
    }
    // One deadline a call: a second grpc-timeout is refused rather than one of them picked.
    if (key == "grpc-timeout") {
      stream->timeout_twice = stream->timeout_given;
      stream->timeout_given = true;
    }
    std::string* kept = key == ":method"         ? &stream->method
                        : key == ":path"         ? &stream->path
                        : key == "content-type"  ? &stream->content_type
                        : key == "grpc-encoding" ? &stream->encoding
                        : key == "grpc-timeout"  ? &stream->timeout
                                                 : nullptr;
    if (kept) kept->assign(view(value, value_size));
    return 0;
  }

  static int on_data(nghttp2_session*, uint8_t, int32_t stream_id, const uint8_t* data, size_t size,
                     void* user) {
    GrpcConnection& connection = self(user);
    Stream* stream = find(connection, stream_id);
    if (!stream || stream->answered) return 0;  // answered early: the rest is dropped
    size_t most = connection.limits_.max_message_bytes + kGrpcPrefixBytes;
    if (stream->body.size() + size > most) {
      size_t length = stream->body.size() >= kGrpcPrefixBytes
                          ? declared_length(stream->body)
                          : stream->body.size() + size - kGrpcPrefixBytes;
      connection.respond_status(
          stream_id, 200, int(GrpcCode::kResourceExhausted),
          message_too_large(std::max(length, connection.limits_.max_message_bytes + 1),
                            connection.limits_.max_message_bytes));
      return 0;
    }
    if (!connection.may_hold(stream_id, size)) return 0;
    stream->body.append(view(data, size));
    connection.hold(size);
    connection.refuse_declared_too_large(stream_id, *stream);
    return 0;
  }

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    bool request_part = frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA;
    GrpcConnection& connection = self(user);
    if (request_part) ++connection.call_frames_;
    Stream* stream = request_part ? find(connection, frame->hd.stream_id) : nullptr;
    if (stream && frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
      connection.take_deadline(frame->hd.stream_id, *stream);
    if (!request_part || !(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) return 0;
    if (stream && !stream->answered) connection.end_request(frame->hd.stream_id, *stream);
    return 0;
  }

  static int on_close(nghttp2_session*, int32_t stream_id, uint32_t, void* user) {
    GrpcConnection& connection = self(user);
    auto found = connection.streams_.find(stream_id);
    if (found == connection.streams_.end()) return 0;
    connection.release(found->second->body.size());
    connection.sent(found->second->reply_counted);
    connection.streams_.erase(found);
    return 0;
  }

  static ssize_t read_reply(nghttp2_session* session, int32_t stream_id, uint8_t* buffer,
                            size_t size, uint32_t* flags, nghttp2_data_source*, void* user) {
    Stream* stream = find(self(user), stream_id);
    if (!stream) return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    size_t count = std::min(size, stream->reply.size() - stream->reply_sent);
    std::memcpy(buffer, stream->reply.data() + stream->reply_sent, count);
    stream->reply_sent += count;
    if (stream->reply_sent == stream->reply.size()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
      nghttp2_nv trailers[] = {header("grpc-status", "0")};
      if (nghttp2_submit_trailer(session, stream_id, trailers, 1) != 0)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
      std::string().swap(stream->reply);
      self(user).sent(stream->reply_counted);
      stream->reply_counted = 0;
    }
    return ssize_t(count);
  }
};

GrpcConnection::GrpcConnection(GrpcLimits limits, OnCall on_call)
    : limits_(limits), on_call_(std::move(on_call)), session_(std::make_unique<Session>()) {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, Callbacks::begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, Callbacks::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, Callbacks::on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, Callbacks::on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, Callbacks::on_close);
  int made = nghttp2_session_server_new(&session_->session, callbacks, this);
  nghttp2_session_callbacks_del(callbacks);
  if (made != 0) throw std::bad_alloc();
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, limits_.max_streams},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, uint32_t(kStreamWindow)},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, uint32_t(limits_.max_header_bytes)},
  };
  nghttp2_submit_settings(session_->session, NGHTTP2_FLAG_NONE, settings, 3);
  nghttp2_session_set_local_window_size(session_->session, NGHTTP2_FLAG_NONE, 0, kConnectionWindow);
}

GrpcConnection::~GrpcConnection() {
  // Its calls and answers go with it.
  if (limits_.server_held) *limits_.server_held -= held_bytes_;
  if (limits_.server_unsent) *limits_.server_unsent -= unsent_bytes_;
}

bool GrpcConnection::may_send(size_t size) {
  if (limits_.server_unsent && *limits_.server_unsent + size > limits_.max_server_unsent_bytes)
    return false;
  unsent_bytes_ += size;
  if (limits_.server_unsent) *limits_.server_unsent += size;
  return true;
}

void GrpcConnection::sent(size_t size) {
  unsent_bytes_ -= size;
  if (limits_.server_unsent) *limits_.server_unsent -= size;
}

bool GrpcConnection::may_hold(int32_t stream_id, size_t size) {
  if (held_bytes_ + size > 4 * limits_.max_message_bytes) {
    respond_status(stream_id, 200, int(GrpcCode::kResourceExhausted),
                   "this connection holds too many request bytes not yet answered; send fewer "
                   "calls at once");
    return false;
  }
  if (limits_.server_held && *limits_.server_held + size > limits_.max_server_held_bytes) {
    respond_status(stream_id, 200, int(GrpcCode::kResourceExhausted),
                   fmt::format("the server holds as many request bytes still arriving as all its "
                               "clients together may ({}, --max-pending-bytes); try again",
                               limits_.max_server_held_bytes));
    return false;
  }
  return true;
}

void GrpcConnection::hold(size_t size) {
  held_bytes_ += size;
  if (limits_.server_held) *limits_.server_held += size;
}

void GrpcConnection::release(size_t size) {
  held_bytes_ -= size;
  if (limits_.server_held) *limits_.server_held -= size;
}

bool GrpcConnection::receive(const char* data, size_t size) {
  if (failed_) return false;
  ssize_t taken =
      nghttp2_session_mem_recv(session_->session, reinterpret_cast<const uint8_t*>(data), size);
  if (taken < 0) {
    failed_ = true;
    nghttp2_session_terminate_session(session_->session, NGHTTP2_PROTOCOL_ERROR);
    return false;
  }
  return true;
}

size_t GrpcConnection::arriving() const {
  size_t count = 0;
  for (const auto& [id, stream] : streams_) count += stream->received ? 0 : 1;
  return count;
}

void GrpcConnection::end_request(int32_t stream_id, Stream& stream) {
  stream.received = true;
  ++requests_received_;
  if (stream.headers_too_large)
    return respond_status(
        stream_id, 200, int(GrpcCode::kResourceExhausted),
        fmt::format("the request's headers are over {} bytes", limits_.max_header_bytes));
  if (stream.method != "POST")
    return respond_status(stream_id, 405, int(GrpcCode::kUnimplemented),
                          "gRPC calls are POST requests");
  if (!is_grpc_content_type(stream.content_type))
    return respond_status(stream_id, 415, int(GrpcCode::kInternal),
                          "gRPC calls have content-type application/grpc");
  GrpcUnframed unframed = unframe_message(stream.body, stream.encoding, limits_.max_message_bytes);
  release(stream.body.size());
  std::string().swap(stream.body);
  std::optional<std::chrono::nanoseconds> timeout;
  if (!stream.timeout.empty()) timeout = parse_grpc_timeout(stream.timeout);  // checked at headers
  if (unframed.code != GrpcCode::kOk)
    return respond_status(stream_id, 200, int(unframed.code), unframed.error);
  GrpcIncoming call{stream_id,
                    std::move(stream.path),
                    std::move(stream.authorization),
                    std::move(unframed.message),
                    timeout,
                    stream.deadline,
                    stream.abandon.view()};
  ++unanswered_;
  on_call_(call);
}

void GrpcConnection::answer(GrpcOutgoing outgoing) {
  --unanswered_;
  auto found = streams_.find(outgoing.stream);
  if (found == streams_.end() || found->second->answered) return;  // cancelled by its client
  respond(outgoing.stream, *found->second, outgoing);
}

void GrpcConnection::expire(int32_t stream) {
  auto found = streams_.find(stream);
  if (found == streams_.end() || found->second->answered) return;
  found->second->abandon.set();  // its model work, if still queued, is dropped
  respond_status(stream, 200, int(GrpcCode::kDeadlineExceeded), "Deadline Exceeded");
}

// At the end of a call's headers: its deadline counts from now. A malformed or repeated
// grpc-timeout is answered at once, not when the body has come (it was held to the read timeout).
void GrpcConnection::take_deadline(int32_t stream_id, Stream& stream) {
  if (!stream.timeout_given || stream.answered) return;
  std::optional<std::chrono::nanoseconds> timeout = parse_grpc_timeout(stream.timeout);
  if (timeout && !stream.timeout_twice) {
    stream.deadline = limits_.now() + *timeout;
    return;
  }
  respond_status(stream_id, 200, int(GrpcCode::kInvalidArgument),
                 stream.timeout_twice
                     ? "grpc-timeout is given twice; a call has one deadline"
                     : "grpc-timeout: expected 1 to 8 digits and a unit (H, M, S, m, u or n)");
}

// The prefix says how long the message is: one over the limit is refused as soon as its prefix
// has come, and what came of it let go, rather than once the limit's worth has arrived (a prefix
// of 4 GiB on a stream left open was held to the read timeout).
void GrpcConnection::refuse_declared_too_large(int32_t stream_id, Stream& stream) {
  if (stream.body.size() < kGrpcPrefixBytes) return;
  size_t length = declared_length(stream.body);
  if (length <= limits_.max_message_bytes) return;
  release(stream.body.size());
  std::string().swap(stream.body);
  respond_status(stream_id, 200, int(GrpcCode::kResourceExhausted),
                 message_too_large(length, limits_.max_message_bytes));
}

bool GrpcConnection::expire_arriving(std::chrono::steady_clock::time_point now) {
  std::vector<int32_t> late;
  for (const auto& [id, stream] : streams_)
    if (!stream->received && !stream->answered && stream->deadline && *stream->deadline <= now)
      late.push_back(id);
  for (int32_t id : late) {
    Stream& stream = *streams_[id];
    release(stream.body.size());
    std::string().swap(stream.body);
    respond_status(id, 200, int(GrpcCode::kDeadlineExceeded), "Deadline Exceeded");
  }
  return !late.empty();
}

void GrpcConnection::respond(int32_t stream_id, Stream& stream, const GrpcOutgoing& outgoing) {
  if (outgoing.code != 0) return respond_status(stream_id, 200, outgoing.code, outgoing.error);
  size_t size = outgoing.response.size() + kGrpcPrefixBytes;
  if (!may_send(size))
    return respond_status(
        stream_id, 200, int(GrpcCode::kResourceExhausted),
        fmt::format("the server holds as many answers not yet read by their clients as it may "
                    "({} bytes, --max-pending-bytes); read the answers of earlier calls before "
                    "sending more",
                    limits_.max_server_unsent_bytes));
  stream.answered = true;
  stream.reply = frame_message(outgoing.response);
  stream.reply_counted = size;
  nghttp2_nv headers[] = {header(":status", "200"), header("content-type", "application/grpc"),
                          header("grpc-accept-encoding", kGrpcAcceptEncoding)};
  nghttp2_data_provider provider{};
  provider.read_callback = Callbacks::read_reply;
  nghttp2_submit_response(session_->session, stream_id, headers, 3, &provider);
}

// A trailers-only response: the status in the one header block, which ends the stream.
void GrpcConnection::respond_status(int32_t stream_id, int http_status, int code,
                                    const std::string& error) {
  auto found = streams_.find(stream_id);
  if (found != streams_.end()) found->second->answered = true;
  std::string status = std::to_string(http_status), grpc_status = std::to_string(code);
  std::string message = percent_encode(message_for_client(error));
  std::vector<nghttp2_nv> headers = {header(":status", status),
                                     header("content-type", "application/grpc"),
                                     header("grpc-status", grpc_status)};
  if (!message.empty()) headers.push_back(header("grpc-message", message));
  nghttp2_submit_response(session_->session, stream_id, headers.data(), headers.size(), nullptr);
}

void GrpcConnection::produce(std::string& out, size_t most) {
  while (out.size() < most) {
    const uint8_t* data = nullptr;
    ssize_t size = nghttp2_session_mem_send(session_->session, &data);
    if (size <= 0) {
      if (size < 0) failed_ = true;
      return;
    }
    out.append(view(data, size_t(size)));
  }
}

void GrpcConnection::shut_down() {
  if (last_stream_ >= 0) return;
  last_stream_ = nghttp2_session_get_last_proc_stream_id(session_->session);
  nghttp2_submit_goaway(session_->session, NGHTTP2_FLAG_NONE, last_stream_, NGHTTP2_NO_ERROR,
                        nullptr, 0);
}

void GrpcConnection::time_out(const std::string& why) {
  std::vector<int32_t> arriving;
  for (const auto& [id, stream] : streams_)
    if (!stream->received && !stream->answered) arriving.push_back(id);
  for (int32_t id : arriving) respond_status(id, 200, int(GrpcCode::kDeadlineExceeded), why);
  shut_down();
}

bool GrpcConnection::wants_to_send() const {
  return nghttp2_session_want_write(session_->session) != 0;
}

bool GrpcConnection::finished() const {
  return failed_ ? !nghttp2_session_want_write(session_->session)
                 : !nghttp2_session_want_read(session_->session) &&
                       !nghttp2_session_want_write(session_->session);
}

}  // namespace kiln::net
