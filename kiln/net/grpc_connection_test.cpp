// GrpcConnection driven by a real HTTP/2 client (nghttp2's client session), its bytes pumped both
// ways in memory: a unary call's path, token and message, OK and error answers as gRPC frames
// them, the requests it refuses (method, content-type, size of message and headers), calls
// cancelled, in flight together or taken before a shut-down, and bytes that are not HTTP/2.

#include "kiln/net/grpc_connection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln::net {
namespace grpc_connection_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr size_t kAll = std::numeric_limits<size_t>::max();

// What the client received on one stream.
struct Reply {
  std::map<std::string, std::string> headers;   // the response's header block
  std::map<std::string, std::string> trailers;  // its trailers, when a second block came
  int header_blocks = 0;
  std::string data;  // every DATA byte
  bool closed = false;
  uint32_t close_error = 0;
  int status() const {
    auto found = headers.find(":status");
    return found == headers.end() ? 0 : std::stoi(found->second);
  }
  // grpc-status and grpc-message, wherever they came (trailers, or a trailers-only response).
  std::string grpc(const std::string& name) const {
    auto found = trailers.find(name);
    if (found != trailers.end()) return found->second;
    found = headers.find(name);
    return found == headers.end() ? "" : found->second;
  }
};

// A request body the client sends; held open (no END_STREAM) while `hold` is true.
struct Upload {
  std::string body;
  size_t sent = 0;
  size_t chunk = kAll;  // the most one DATA frame carries
  bool hold = false;
};

std::vector<std::pair<std::string, std::string>> grpc_headers(const std::string& path) {
  return {{":method", "POST"},
          {":scheme", "http"},
          {":path", path},
          {":authority", "localhost"},
          {"content-type", "application/grpc"},
          {"te", "trailers"}};
}

// One HTTP/2 client session and the server connection under test, without a socket between.
class Client {
 public:
  explicit Client(GrpcConnection& server) : server_(server) {
    nghttp2_session_callbacks* callbacks = nullptr;
    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
    int made = nghttp2_session_client_new(&session_, callbacks, this);
    nghttp2_session_callbacks_del(callbacks);
    if (made != 0) throw std::runtime_error("nghttp2_session_client_new failed");
    nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
  }
  ~Client() { nghttp2_session_del(session_); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Submits a request (sent at the next pump()); its stream's id.
  int32_t request(const std::vector<std::pair<std::string, std::string>>& headers,
                  const std::string& body, size_t chunk = kAll, bool hold = false) {
    std::vector<nghttp2_nv> nva;
    for (const auto& [name, value] : headers)
      nva.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                     reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(),
                     value.size(), NGHTTP2_NV_FLAG_NONE});
    uploads_.push_back(std::make_unique<Upload>(Upload{body, 0, chunk, hold}));
    nghttp2_data_provider provider{};
    provider.source.ptr = uploads_.back().get();
    provider.read_callback = read_body;
    int32_t stream = nghttp2_submit_request(session_, nullptr, nva.data(), nva.size(),
                                            body.empty() && !hold ? nullptr : &provider, nullptr);
    if (stream < 0) throw std::runtime_error(nghttp2_strerror(stream));
    held_[stream] = uploads_.back().get();
    return stream;
  }

  /// A gRPC call of `message`, framed, to `path`.
  int32_t call(const std::string& path, const std::string& message,
               const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    auto headers = grpc_headers(path);
    headers.insert(headers.end(), extra.begin(), extra.end());
    return request(headers, frame_message(message));
  }

  /// Lets a held body end.
  void release(int32_t stream) {
    held_.at(stream)->hold = false;
    nghttp2_session_resume_data(session_, stream);
  }

  void go_away() { nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR); }

  void reset(int32_t stream) {
    nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
  }

  /// What the client session has to send.
  std::string outgoing() {
    std::string bytes;
    const uint8_t* data = nullptr;
    ssize_t size = 0;
    while ((size = nghttp2_session_mem_send(session_, &data)) > 0)
      bytes.append(reinterpret_cast<const char*>(data), size_t(size));
    if (size < 0) ADD_FAILURE() << "client send: " << nghttp2_strerror(int(size));
    return bytes;
  }

  /// Gives the client session what the server sent.
  void incoming(const std::string& bytes) {
    ssize_t taken = nghttp2_session_mem_recv(
        session_, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    if (taken != ssize_t(bytes.size()))
      ADD_FAILURE() << "client receive: " << nghttp2_strerror(int(taken));
  }

  /// Moves bytes both ways until neither side has any to send.
  void pump() {
    for (int round = 0; round < 10000; ++round) {
      std::string to_server = outgoing();
      if (!to_server.empty() && !server_.receive(to_server.data(), to_server.size()))
        server_failed_ = true;
      std::string to_client;
      server_.produce(to_client, kAll);
      if (!to_client.empty()) incoming(to_client);
      if (to_server.empty() && to_client.empty()) return;
    }
    ADD_FAILURE() << "the two sides never stopped sending";
  }

  Reply& reply(int32_t stream) { return replies_[stream]; }
  /// Whether any of a response (headers or data) came on the stream.
  bool responded(int32_t stream) const {
    auto found = replies_.find(stream);
    return found != replies_.end() &&
           (found->second.header_blocks > 0 || !found->second.data.empty());
  }
  bool server_failed() const { return server_failed_; }
  bool goaway = false;
  int32_t goaway_last_stream = -1;
  uint32_t goaway_error = 0;

 private:
  static Client& self(void* user) { return *static_cast<Client*>(user); }

  static ssize_t read_body(nghttp2_session*, int32_t, uint8_t* buffer, size_t length,
                           uint32_t* flags, nghttp2_data_source* source, void*) {
    auto& upload = *static_cast<Upload*>(source->ptr);
    size_t count = std::min({length, upload.chunk, upload.body.size() - upload.sent});
    std::memcpy(buffer, upload.body.data() + upload.sent, count);
    upload.sent += count;
    if (upload.sent == upload.body.size()) {
      if (!upload.hold)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
      else if (count == 0)
        return NGHTTP2_ERR_DEFERRED;
    }
    return ssize_t(count);
  }

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_size, const uint8_t* value, size_t value_size, uint8_t,
                       void* user) {
    Reply& reply = self(user).replies_[frame->hd.stream_id];
    auto& block = frame->headers.cat == NGHTTP2_HCAT_HEADERS ? reply.trailers : reply.headers;
    block[std::string(reinterpret_cast<const char*>(name), name_size)] =
        std::string(reinterpret_cast<const char*>(value), value_size);
    return 0;
  }

  static int on_data(nghttp2_session*, uint8_t, int32_t stream, const uint8_t* data, size_t size,
                     void* user) {
    self(user).replies_[stream].data.append(reinterpret_cast<const char*>(data), size);
    return 0;
  }

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    Client& client = self(user);
    if (frame->hd.type == NGHTTP2_HEADERS) ++client.replies_[frame->hd.stream_id].header_blocks;
    if (frame->hd.type == NGHTTP2_GOAWAY) {
      client.goaway = true;
      client.goaway_last_stream = frame->goaway.last_stream_id;
      client.goaway_error = frame->goaway.error_code;
    }
    return 0;
  }

  static int on_close(nghttp2_session*, int32_t stream, uint32_t error, void* user) {
    Reply& reply = self(user).replies_[stream];
    reply.closed = true;
    reply.close_error = error;
    return 0;
  }

  GrpcConnection& server_;
  nghttp2_session* session_ = nullptr;
  std::vector<std::unique_ptr<Upload>> uploads_;
  std::map<int32_t, Upload*> held_;
  std::map<int32_t, Reply> replies_;
  bool server_failed_ = false;
};

// The frames in `bytes` as HTTP/2 lays them out (9-byte header: length, type, flags, stream); a
// server sends no preface before them.
struct Frame {
  uint8_t type;
  std::string payload;
};
std::vector<Frame> frames(const std::string& bytes) {
  std::vector<Frame> found;
  size_t at = 0;
  while (at + 9 <= bytes.size()) {
    auto byte = [&](size_t i) { return size_t(static_cast<unsigned char>(bytes[at + i])); };
    size_t length = byte(0) << 16 | byte(1) << 8 | byte(2);
    if (at + 9 + length > bytes.size()) break;
    found.push_back({static_cast<uint8_t>(byte(3)), bytes.substr(at + 9, length)});
    at += 9 + length;
  }
  return found;
}

std::string deflated(const std::string& plain) {
  uLongf size = compressBound(static_cast<uLong>(plain.size()));
  std::string out(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                reinterpret_cast<const Bytef*>(plain.data()), static_cast<uLong>(plain.size()),
                Z_BEST_COMPRESSION) != Z_OK)
    throw std::runtime_error("compress2 failed");
  out.resize(size);
  return out;
}

std::string compressed_frame(const std::string& compressed) {
  std::string framed = frame_message(compressed);
  framed[0] = 1;
  return framed;
}

class GrpcConnectionTest : public ::testing::Test {
 protected:
  explicit GrpcConnectionTest(GrpcLimits limits = {})
      : server_(limits, [this](GrpcIncoming& call) { calls_.push_back(call); }), client_(server_) {}

  void answer_ok(int32_t stream, const std::string& response) {
    server_.answer(GrpcOutgoing{stream, 0, "", response});
  }

  GrpcConnection server_;
  std::vector<GrpcIncoming> calls_;
  Client client_;
};

GrpcLimits small_limits() {
  GrpcLimits limits;
  limits.max_message_bytes = 1000;
  limits.max_header_bytes = 512;
  return limits;
}

class GrpcConnectionLimitsTest : public GrpcConnectionTest {
 protected:
  GrpcConnectionLimitsTest() : GrpcConnectionTest(small_limits()) {}
};

// Calls that never finish were capped per connection only: 8 connections took the server from
// 180 MB to 700 MB. The bytes still arriving are counted for all connections together.
TEST(GrpcConnectionsTogether, RequestBytesStillArrivingAreCappedForTheServer) {
  GrpcLimits limits = small_limits();
  limits.max_server_held_bytes = 1500;
  limits.server_held = std::make_shared<std::atomic<size_t>>(0);
  std::vector<GrpcIncoming> calls;
  auto on_call = [&calls](GrpcIncoming& call) { calls.push_back(call); };
  auto first = std::make_unique<GrpcConnection>(limits, on_call);
  GrpcConnection second(limits, on_call);
  Client early(*first), late(second);
  early.request(grpc_headers("/p"), frame_message(std::string(900, 'a')), kAll, true);
  early.pump();
  EXPECT_EQ(*limits.server_held, 905u);  // its framed bytes, held until the call is whole
  int32_t refused =
      late.request(grpc_headers("/p"), frame_message(std::string(900, 'b')), kAll, true);
  late.pump();
  EXPECT_EQ(late.reply(refused).grpc("grpc-status"), "8");  // RESOURCE_EXHAUSTED
  EXPECT_THAT(late.reply(refused).grpc("grpc-message"), HasSubstr("--max-pending-bytes"));
  first.reset();  // its client went: what it held goes with it
  EXPECT_EQ(*limits.server_held, 0u);
  late.call("/p", std::string(900, 'c'));
  late.pump();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].message, std::string(900, 'c'));
  EXPECT_EQ(*limits.server_held, 0u);  // taken whole: no longer held
}

// 240 clients reading their answers slowly took a server from 181 MB to 3.4 GB, kept after they
// had gone: answers not yet taken by their clients are counted for all connections together, and
// one past the cap is RESOURCE_EXHAUSTED instead.
TEST(GrpcConnectionsTogether, AnswersNotYetTakenAreCappedForTheServer) {
  GrpcLimits limits = small_limits();
  limits.max_server_unsent_bytes = 1500;
  limits.server_unsent = std::make_shared<std::atomic<size_t>>(0);
  auto ignore = [](GrpcIncoming&) {};
  auto slow = std::make_unique<GrpcConnection>(limits, ignore);
  GrpcConnection other(limits, ignore);
  Client slow_client(*slow), other_client(other);
  int32_t kept = slow_client.call("/p", "x");
  slow_client.pump();
  slow->answer(GrpcOutgoing{kept, 0, "", std::string(1000, 'a')});  // its client reads nothing
  EXPECT_EQ(*limits.server_unsent, 1005u);
  EXPECT_EQ(slow->unsent_bytes(), 1005u);
  int32_t refused = other_client.call("/p", "y");
  other_client.pump();
  other.answer(GrpcOutgoing{refused, 0, "", std::string(1000, 'b')});
  other_client.pump();
  EXPECT_EQ(other_client.reply(refused).grpc("grpc-status"), "8");  // RESOURCE_EXHAUSTED
  EXPECT_THAT(other_client.reply(refused).grpc("grpc-message"),
              HasSubstr("answers not yet read by their clients"));
  slow_client.pump();  // taken at last: no longer counted
  EXPECT_EQ(slow_client.reply(kept).data, frame_message(std::string(1000, 'a')));
  EXPECT_EQ(*limits.server_unsent, 0u);
  int32_t answered = other_client.call("/p", "z");
  other_client.pump();
  other.answer(GrpcOutgoing{answered, 0, "", std::string(1000, 'c')});
  other_client.pump();
  EXPECT_EQ(other_client.reply(answered).trailers.at("grpc-status"), "0");
  // A connection that goes takes what it had not sent out of the count.
  int32_t left = slow_client.call("/p", "x");
  slow_client.pump();
  slow->answer(GrpcOutgoing{left, 0, "", std::string(700, 'd')});
  EXPECT_EQ(*limits.server_unsent, 705u);
  slow.reset();
  EXPECT_EQ(*limits.server_unsent, 0u);
}

// A prefix declaring a message over the limit is refused as soon as it has come, on a stream
// its client keeps open: it was held to the read timeout, then answered DEADLINE_EXCEEDED.
TEST(GrpcConnectionsTogether, APrefixOverTheLimitIsRefusedAtOnceAndItsBytesLetGo) {
  GrpcLimits limits = small_limits();
  limits.server_held = std::make_shared<std::atomic<size_t>>(0);
  std::vector<GrpcIncoming> calls;
  GrpcConnection server(limits, [&calls](GrpcIncoming& call) { calls.push_back(call); });
  Client client(server);
  std::string prefix_and_some = frame_message(std::string(5000, 'a')).substr(0, 40);
  int32_t open = client.request(grpc_headers("/p"), prefix_and_some, kAll, true);
  client.pump();
  EXPECT_TRUE(calls.empty());
  EXPECT_EQ(client.reply(open).grpc("grpc-status"), "8");  // RESOURCE_EXHAUSTED
  EXPECT_EQ(client.reply(open).grpc("grpc-message"),
            "Received message larger than max (5000 vs. 1000)");
  EXPECT_EQ(*limits.server_held, 0u);
}

TEST_F(GrpcConnectionTest, UnaryCallReachesOnCallAndItsAnswerGoesBackFramed) {
  int32_t stream =
      client_.call("/tensorflow.serving.PredictionService/Predict",
                   std::string("request\0bytes", 13), {{"authorization", "Bearer t0k"}});
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].stream, stream);
  EXPECT_EQ(calls_[0].path, "/tensorflow.serving.PredictionService/Predict");
  EXPECT_THAT(calls_[0].authorization, ElementsAre("Bearer t0k"));
  EXPECT_EQ(calls_[0].message, std::string("request\0bytes", 13));
  EXPECT_EQ(server_.unanswered(), 1u);
  EXPECT_FALSE(client_.responded(stream));

  answer_ok(stream, "the response");
  client_.pump();
  EXPECT_EQ(server_.unanswered(), 0u);
  const Reply& reply = client_.reply(stream);
  EXPECT_EQ(reply.status(), 200);
  EXPECT_EQ(reply.headers.at("content-type"), "application/grpc");
  EXPECT_EQ(reply.headers.count("grpc-status"), 0u);
  EXPECT_EQ(reply.data, frame_message("the response"));
  EXPECT_EQ(reply.header_blocks, 2);
  EXPECT_EQ(reply.trailers.at("grpc-status"), "0");
  EXPECT_TRUE(reply.closed);
  EXPECT_EQ(reply.close_error, uint32_t(NGHTTP2_NO_ERROR));
  EXPECT_FALSE(client_.server_failed());
  EXPECT_FALSE(server_.finished());
}

// A call's deadline was enforced only once its request came whole: one trickled in was
// answered at the read or request timeout (10 s, 30 s) whatever its grpc-timeout. It counts
// from the headers; past it, the call still arriving is answered and what it held let go.
TEST(GrpcConnectionDeadlines, ACallStillArrivingPastItsDeadlineIsAnsweredAndLetGo) {
  auto now = std::chrono::steady_clock::time_point() + std::chrono::hours(1);
  GrpcLimits limits;
  limits.now = [&now] { return now; };
  limits.server_held = std::make_shared<std::atomic<size_t>>(0);
  std::vector<GrpcIncoming> calls;
  GrpcConnection server(limits, [&calls](GrpcIncoming& call) { calls.push_back(call); });
  Client client(server);
  auto headers = grpc_headers("/p");
  headers.emplace_back("grpc-timeout", "100m");
  int32_t trickled = client.request(headers, frame_message(std::string(900, 'a')), kAll, true);
  int32_t whole = client.request(headers, frame_message("m"));
  client.pump();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].deadline, now + std::chrono::milliseconds(100)) << "from its headers";
  EXPECT_EQ(*limits.server_held, 905u);
  now += std::chrono::milliseconds(99);
  EXPECT_FALSE(server.expire_arriving(now));
  now += std::chrono::milliseconds(1);
  EXPECT_TRUE(server.expire_arriving(now));
  client.pump();
  EXPECT_EQ(client.reply(trickled).grpc("grpc-status"), "4");  // DEADLINE_EXCEEDED
  EXPECT_EQ(client.reply(whole).grpc("grpc-status"), "") << "the model has it: the loop's";
  EXPECT_EQ(*limits.server_held, 0u) << "what it held is let go";
  client.release(trickled);  // the rest of it comes, and is dropped
  client.pump();
  EXPECT_EQ(calls.size(), 1u);
  EXPECT_EQ(server.unanswered(), 1u);
  EXPECT_FALSE(server.expire_arriving(now + std::chrono::hours(1)));
}

// A malformed grpc-timeout was refused only once the body had come: one still arriving was
// held to the read timeout (10 s). It is refused at its headers, and so are a second one and an
// empty one (which counted as none and was held to the read timeout too).
TEST(GrpcConnectionDeadlines, AMalformedOrRepeatedTimeoutIsRefusedAtItsHeaders) {
  std::vector<GrpcIncoming> calls;
  GrpcConnection server(GrpcLimits{}, [&calls](GrpcIncoming& call) { calls.push_back(call); });
  Client client(server);
  auto with = [](std::vector<std::pair<std::string, std::string>> extra) {
    auto headers = grpc_headers("/p");
    headers.insert(headers.end(), extra.begin(), extra.end());
    return headers;
  };
  std::string body = frame_message(std::string(100, 'a'));
  int32_t malformed = client.request(with({{"grpc-timeout", "1x"}}), body, kAll, true);
  int32_t twice =
      client.request(with({{"grpc-timeout", "1S"}, {"grpc-timeout", "garbage"}}), body, kAll, true);
  int32_t empty = client.request(with({{"grpc-timeout", ""}}), body, kAll, true);  // campaign 7
  int32_t good = client.request(with({{"grpc-timeout", "5S"}}), body, kAll, true);
  client.pump();
  EXPECT_EQ(client.reply(malformed).grpc("grpc-status"), "3");  // INVALID_ARGUMENT
  EXPECT_EQ(client.reply(empty).grpc("grpc-status"), "3") << "an empty value is no deadline";
  EXPECT_THAT(client.reply(malformed).grpc("grpc-message"), HasSubstr("grpc-timeout: expected"));
  EXPECT_EQ(client.reply(twice).grpc("grpc-status"), "3");
  EXPECT_THAT(client.reply(twice).grpc("grpc-message"), HasSubstr("given twice"));
  EXPECT_EQ(client.reply(good).grpc("grpc-status"), "") << "still arriving, in time";
  for (int32_t stream : {malformed, twice, empty, good}) client.release(stream);
  client.pump();
  ASSERT_EQ(calls.size(), 1u) << "only the good call reaches the server";
  EXPECT_EQ(calls[0].stream, good);
}

// Kept in order, so that the call can refuse credentials sent twice (a wrong one, then the right
// one, was let in when the last was kept).
TEST_F(GrpcConnectionTest, EachAuthorizationEntryReachesTheCall) {
  client_.call("/tensorflow.serving.ModelService/GetModelStatus", "",
               {{"authorization", "Bearer wrong"}, {"authorization", "Bearer right"}});
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(calls_[0].authorization, ElementsAre("Bearer wrong", "Bearer right"));
}

// `grpc-timeout` was ignored: a call past its client's deadline stayed with the server. It
// reaches the call, expire() answers DEADLINE_EXCEEDED, and the model's late answer is dropped.
TEST_F(GrpcConnectionTest, AClientsDeadlineReachesTheCallAndAnExpiredCallIsAnswered) {
  int32_t stream = client_.call("/p", "m", {{"grpc-timeout", "250m"}});
  int32_t none = client_.call("/p", "m");
  client_.pump();
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].timeout, std::chrono::milliseconds(250));
  EXPECT_FALSE(calls_[1].timeout);
  server_.expire(stream);
  client_.pump();
  EXPECT_EQ(client_.reply(stream).grpc("grpc-status"), "4");
  EXPECT_EQ(client_.reply(stream).grpc("grpc-message"), "Deadline Exceeded");
  EXPECT_EQ(server_.unanswered(), 2u) << "the model has both still";
  answer_ok(stream, "late");
  answer_ok(none, "in time");
  client_.pump();
  EXPECT_EQ(server_.unanswered(), 0u);
  EXPECT_EQ(client_.reply(stream).data, "") << "the late answer is dropped";
  EXPECT_EQ(client_.reply(none).data, frame_message("in time"));
  EXPECT_FALSE(client_.server_failed());
}

TEST_F(GrpcConnectionTest, AMalformedDeadlineIsInvalidArgumentNamingTheHeader) {
  int32_t stream = client_.call("/p", "m", {{"grpc-timeout", "123456789S"}});
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(client_.reply(stream).grpc("grpc-status"), "3");
  EXPECT_THAT(client_.reply(stream).grpc("grpc-message"), HasSubstr("grpc-timeout"));
}

TEST_F(GrpcConnectionTest, CallWithoutAuthorizationHasAnEmptyOne) {
  int32_t stream = client_.call("/tensorflow.serving.ModelService/GetModelStatus", "");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_TRUE(calls_[0].authorization.empty());
  EXPECT_EQ(calls_[0].message, "");
  answer_ok(stream, "");
  client_.pump();
  EXPECT_EQ(client_.reply(stream).data, frame_message(""));
  EXPECT_EQ(client_.reply(stream).trailers.at("grpc-status"), "0");
}

TEST_F(GrpcConnectionTest, LargeResponseComesWhole) {
  int32_t stream = client_.call("/p", "x");
  client_.pump();
  std::string response(300000, '\0');
  for (size_t i = 0; i < response.size(); ++i) response[i] = static_cast<char>(i * 31 % 251);
  answer_ok(stream, response);
  client_.pump();
  EXPECT_EQ(client_.reply(stream).data, frame_message(response));
  EXPECT_EQ(client_.reply(stream).trailers.at("grpc-status"), "0");
}

TEST_F(GrpcConnectionTest, DeflatedRequestIsInflated) {
  std::string message(50000, 'q');
  auto headers = grpc_headers("/p");
  headers.push_back({"grpc-encoding", "deflate"});
  client_.request(headers, compressed_frame(deflated(message)));
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].message, message);
}

TEST_F(GrpcConnectionTest, GrpcContentTypesWithSuffixesAreCalls) {
  auto plus = grpc_headers("/a");
  plus[4].second = "application/grpc+proto";
  auto params = grpc_headers("/b");
  params[4].second = "application/grpc;charset=utf-8";
  client_.request(plus, frame_message("1"));
  client_.request(params, frame_message("2"));
  client_.pump();
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].path, "/a");
  EXPECT_EQ(calls_[1].path, "/b");
}

TEST_F(GrpcConnectionTest, RequestLargerThanTheFlowControlWindowsComesWhole) {
  // 3 MB: past HTTP/2's initial 64 KB windows and the connection's 1 MB stream window, so it comes
  // only as the server opens them.
  std::string message(3 << 20, '\0');
  for (size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>(i * 131 % 253);
  int32_t stream = client_.call("/p", message);
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].message.size(), message.size());
  EXPECT_TRUE(calls_[0].message == message);
  answer_ok(stream, "ok");
  client_.pump();
  EXPECT_EQ(client_.reply(stream).trailers.at("grpc-status"), "0");
}

TEST_F(GrpcConnectionTest, ErrorAnswerIsTrailersOnlyWithItsMessagePercentEncoded) {
  int32_t stream = client_.call("/p", "m");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  server_.answer(GrpcOutgoing{stream, 5, "Servable not found: caf\xc3\xa9 at 100%", "ignored"});
  client_.pump();
  EXPECT_EQ(server_.unanswered(), 0u);
  const Reply& reply = client_.reply(stream);
  EXPECT_EQ(reply.header_blocks, 1);
  EXPECT_EQ(reply.status(), 200);
  EXPECT_EQ(reply.headers.at("content-type"), "application/grpc");
  EXPECT_EQ(reply.headers.at("grpc-status"), "5");
  EXPECT_EQ(reply.headers.at("grpc-message"), "Servable not found: caf%C3%A9 at 100%25");
  EXPECT_TRUE(reply.trailers.empty());
  EXPECT_EQ(reply.data, "");
  EXPECT_TRUE(reply.closed);
}

TEST_F(GrpcConnectionTest, GetIsRefusedWith405) {
  auto headers = grpc_headers("/p");
  headers[0].second = "GET";
  int32_t with_body = client_.request(headers, frame_message("m"));
  int32_t without = client_.request(headers, "");
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(server_.unanswered(), 0u);
  for (int32_t stream : {with_body, without}) {
    const Reply& reply = client_.reply(stream);
    EXPECT_EQ(reply.status(), 405) << stream;
    EXPECT_EQ(reply.grpc("grpc-status"), "12") << stream;
    EXPECT_TRUE(reply.closed) << stream;
  }
}

TEST_F(GrpcConnectionTest, JsonContentTypeIsRefusedWith415) {
  auto json = grpc_headers("/p");
  json[4].second = "application/json";
  auto web = grpc_headers("/p");
  web[4].second = "application/grpc-web";
  auto none = grpc_headers("/p");
  none.erase(none.begin() + 4);
  std::vector<int32_t> streams = {client_.request(json, frame_message("m")),
                                  client_.request(web, frame_message("m")),
                                  client_.request(none, frame_message("m"))};
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  for (int32_t stream : streams) {
    const Reply& reply = client_.reply(stream);
    EXPECT_EQ(reply.status(), 415) << stream;
    EXPECT_EQ(reply.grpc("grpc-status"), "13") << stream;
  }
}

TEST_F(GrpcConnectionTest, MalformedBodyIsAnsweredAndTheConnectionGoesOn) {
  int32_t empty = client_.request(grpc_headers("/p"), "");
  int32_t two = client_.request(grpc_headers("/p"), frame_message("a") + frame_message("b"));
  auto snappy = grpc_headers("/p");
  snappy.push_back({"grpc-encoding", "snappy"});
  int32_t unknown = client_.request(snappy, compressed_frame("zz"));
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(client_.reply(empty).grpc("grpc-status"), "13");
  EXPECT_EQ(client_.reply(two).grpc("grpc-status"), "13");
  EXPECT_EQ(client_.reply(unknown).grpc("grpc-status"), "12");
  EXPECT_THAT(client_.reply(unknown).grpc("grpc-message"), HasSubstr("snappy"));

  int32_t good = client_.call("/p", "fine");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  answer_ok(good, "ok");
  client_.pump();
  EXPECT_EQ(client_.reply(good).trailers.at("grpc-status"), "0");
}

TEST_F(GrpcConnectionLimitsTest, MessageOverTheLimitIsResourceExhaustedAndTheConnectionGoesOn) {
  int32_t large = client_.call("/p", std::string(2000, 'a'));
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(server_.unanswered(), 0u);
  const Reply& reply = client_.reply(large);
  EXPECT_EQ(reply.status(), 200);
  EXPECT_EQ(reply.grpc("grpc-status"), "8");
  EXPECT_EQ(reply.grpc("grpc-message"), "Received message larger than max (2000 vs. 1000)");
  EXPECT_TRUE(reply.closed);

  int32_t next = client_.call("/p", std::string(1000, 'b'));  // exactly the limit
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].stream, next);
  EXPECT_EQ(calls_[0].message, std::string(1000, 'b'));
  answer_ok(next, "ok");
  client_.pump();
  EXPECT_EQ(client_.reply(next).trailers.at("grpc-status"), "0");
  EXPECT_FALSE(client_.server_failed());
}

TEST_F(GrpcConnectionLimitsTest, MessageOverTheLimitInSmallFramesNamesItsDeclaredLength) {
  auto headers = grpc_headers("/p");
  int32_t large = client_.request(headers, frame_message(std::string(5000, 'a')), 7);
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(client_.reply(large).grpc("grpc-status"), "8");
  EXPECT_EQ(client_.reply(large).grpc("grpc-message"),
            "Received message larger than max (5000 vs. 1000)");
}

TEST_F(GrpcConnectionLimitsTest, CompressedMessageInflatingOverTheLimitIsResourceExhausted) {
  auto headers = grpc_headers("/p");
  headers.push_back({"grpc-encoding", "deflate"});
  int32_t bomb = client_.request(headers, compressed_frame(deflated(std::string(100000, '\0'))));
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(client_.reply(bomb).grpc("grpc-status"), "8");
  EXPECT_THAT(client_.reply(bomb).grpc("grpc-message"),
              HasSubstr("Received message larger than max"));
}

TEST_F(GrpcConnectionLimitsTest, HeadersOverTheLimitAreResourceExhausted) {
  int32_t stream = client_.call("/p", "m", {{"authorization", "Bearer " + std::string(2000, 't')}});
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  const Reply& reply = client_.reply(stream);
  EXPECT_EQ(reply.grpc("grpc-status"), "8");
  EXPECT_THAT(reply.grpc("grpc-message"), HasSubstr("512"));
  EXPECT_TRUE(reply.closed);

  int32_t next = client_.call("/p", "m", {{"authorization", "Bearer short"}});
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].stream, next);
  EXPECT_THAT(calls_[0].authorization, ElementsAre("Bearer short"));
}

TEST_F(GrpcConnectionLimitsTest, CallsOverTheStreamLimitAreRefused) {
  // Sent before the server's SETTINGS reached the client: the server refuses what is over.
  GrpcLimits limits;
  limits.max_streams = 2;
  std::vector<GrpcIncoming> taken;
  GrpcConnection server(limits, [&](GrpcIncoming& call) { taken.push_back(call); });
  Client client(server);
  std::vector<int32_t> streams;
  for (int i = 0; i < 3; ++i) streams.push_back(client.call("/p", "m"));
  client.pump();
  ASSERT_EQ(taken.size(), 2u);
  EXPECT_EQ(taken[0].stream, streams[0]);
  EXPECT_EQ(taken[1].stream, streams[1]);
  EXPECT_TRUE(client.reply(streams[2]).closed);
  EXPECT_EQ(client.reply(streams[2]).close_error, uint32_t(NGHTTP2_REFUSED_STREAM));
  EXPECT_EQ(client.reply(streams[2]).header_blocks, 0);
  for (const GrpcIncoming& call : taken) server.answer(GrpcOutgoing{call.stream, 0, "", "ok"});
  client.pump();
  int32_t next = client.call("/p", "m");
  client.pump();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[2].stream, next);
}

TEST_F(GrpcConnectionLimitsTest, BytesHeldForUnfinishedCallsAreBounded) {
  // Four calls of 900 bytes each held open: 3600 of the 4000 a connection holds; the fifth's
  // bytes go over, and it alone is refused.
  std::vector<int32_t> held;
  for (int i = 0; i < 4; ++i)
    held.push_back(
        client_.request(grpc_headers("/p"), frame_message(std::string(895, 'h')), kAll, true));
  client_.pump();
  int32_t fifth = client_.request(grpc_headers("/p"), frame_message(std::string(895, 'i')));
  client_.pump();
  EXPECT_EQ(client_.reply(fifth).grpc("grpc-status"), "8");
  EXPECT_THAT(client_.reply(fifth).grpc("grpc-message"), HasSubstr("too many request bytes"));
  EXPECT_TRUE(calls_.empty());

  for (int32_t stream : held) client_.release(stream);
  client_.pump();
  ASSERT_EQ(calls_.size(), 4u);
  for (const GrpcIncoming& call : calls_) answer_ok(call.stream, "ok");
  client_.pump();
  for (int32_t stream : held) EXPECT_EQ(client_.reply(stream).trailers.at("grpc-status"), "0");

  // Answered calls hold nothing: four more fit again.
  calls_.clear();
  for (int i = 0; i < 4; ++i) client_.call("/p", std::string(895, 'j'));
  client_.pump();
  EXPECT_EQ(calls_.size(), 4u);
}

TEST_F(GrpcConnectionTest, CallResetBeforeItsAnswerIsDropped) {
  int32_t stream = client_.call("/p", "m");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(server_.unanswered(), 1u);
  client_.reset(stream);
  client_.pump();
  EXPECT_EQ(server_.unanswered(), 1u);  // still owed an answer() by whoever took the call

  answer_ok(stream, "too late");
  EXPECT_EQ(server_.unanswered(), 0u);
  std::string out;
  server_.produce(out, kAll);
  EXPECT_EQ(out, "");  // nothing sent for the stream that went
  EXPECT_FALSE(client_.responded(stream));

  int32_t next = client_.call("/p", "again");
  client_.pump();
  ASSERT_EQ(calls_.size(), 2u);
  answer_ok(next, "ok");
  client_.pump();
  EXPECT_EQ(client_.reply(next).data, frame_message("ok"));
  EXPECT_EQ(client_.reply(next).trailers.at("grpc-status"), "0");
}

// A reset call's model work kept running for no one: 5,000 calls reset by their client held the
// server's queue for 21 s. Its abandon mark tells whoever holds the work (serving/batcher.h).
TEST_F(GrpcConnectionTest, ACallResetOrPastItsDeadlineIsMarkedAbandonedAndOthersAreNot) {
  int32_t reset = client_.call("/p", "m");
  int32_t expired = client_.call("/p", "m", {{"grpc-timeout", "1m"}});
  int32_t waiting = client_.call("/p", "m");
  client_.pump();
  ASSERT_EQ(calls_.size(), 3u);
  for (const GrpcIncoming& call : calls_) {
    ASSERT_TRUE(call.abandoned);
    EXPECT_FALSE(is_abandoned(call.abandoned));
  }
  client_.reset(reset);
  client_.pump();
  server_.expire(expired);
  EXPECT_TRUE(is_abandoned(calls_[0].abandoned));
  EXPECT_TRUE(is_abandoned(calls_[1].abandoned));
  EXPECT_FALSE(is_abandoned(calls_[2].abandoned)) << "its client still waits";
  answer_ok(waiting, "ok");
  client_.pump();
  EXPECT_EQ(client_.reply(waiting).data, frame_message("ok"));
}

TEST(GrpcConnectionAbandon, EveryCallOfAConnectionThatGoesIsMarkedAbandoned) {
  std::vector<GrpcIncoming> calls;
  auto server = std::make_unique<GrpcConnection>(
      GrpcLimits{}, [&calls](GrpcIncoming& call) { calls.push_back(call); });
  {
    Client client(*server);
    client.call("/p", "a");
    client.call("/p", "b");
    client.pump();
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_FALSE(is_abandoned(calls[0].abandoned));
  server.reset();  // the loop drops a connection whose socket has closed
  EXPECT_TRUE(is_abandoned(calls[0].abandoned));
  EXPECT_TRUE(is_abandoned(calls[1].abandoned));
}

TEST_F(GrpcConnectionTest, ErrorAnswerToACallResetIsDroppedToo) {
  int32_t stream = client_.call("/p", "m");
  client_.pump();
  client_.reset(stream);
  client_.pump();
  server_.answer(GrpcOutgoing{stream, 13, "failed", ""});
  EXPECT_EQ(server_.unanswered(), 0u);
  std::string out;
  server_.produce(out, kAll);
  EXPECT_EQ(out, "");
}

TEST_F(GrpcConnectionTest, CallResetWhileItsRequestComesIsNeverTaken) {
  int32_t stream = client_.request(grpc_headers("/p"), frame_message("m"), kAll, true);
  client_.pump();
  client_.reset(stream);
  client_.pump();
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(server_.unanswered(), 0u);
  int32_t next = client_.call("/p", "n");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].stream, next);
}

// The loop's read timeout: a call whose request stopped coming is told why, a call received whole
// is still answered, and no new call is taken.
TEST_F(GrpcConnectionTest, ATimeOutAnswersTheCallsStillArrivingAndSaysGoAway) {
  int32_t whole = client_.call("/p", "m");
  int32_t stalled = client_.request(grpc_headers("/p"), frame_message("half"), kAll, true);
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  server_.time_out("nothing for 10 s");
  client_.pump();
  EXPECT_EQ(client_.reply(stalled).grpc("grpc-status"), "4");  // DEADLINE_EXCEEDED
  EXPECT_EQ(client_.reply(stalled).grpc("grpc-message"), "nothing for 10 s");
  EXPECT_TRUE(client_.goaway);
  EXPECT_FALSE(client_.responded(whole));
  answer_ok(whole, "late but answered");
  client_.pump();
  EXPECT_EQ(client_.reply(whole).data, frame_message("late but answered"));
}

TEST_F(GrpcConnectionTest, CallsInFlightTogetherAreAnsweredEachOnItsStream) {
  std::vector<int32_t> streams;
  for (int i = 0; i < 4; ++i)
    streams.push_back(client_.call("/call/" + std::to_string(i), "request " + std::to_string(i)));
  client_.pump();
  ASSERT_EQ(calls_.size(), 4u);
  EXPECT_EQ(server_.unanswered(), 4u);
  std::map<int32_t, std::string> message_of;
  for (const GrpcIncoming& call : calls_) message_of[call.stream] = call.message;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(message_of[streams[size_t(i)]], "request " + std::to_string(i));

  // Answered out of order, one of them with an error, pumping between some answers.
  answer_ok(streams[2], "response 2");
  client_.pump();
  EXPECT_EQ(client_.reply(streams[2]).trailers.at("grpc-status"), "0");
  EXPECT_FALSE(client_.responded(streams[0]));
  server_.answer(GrpcOutgoing{streams[0], 3, "bad request 0", ""});
  answer_ok(streams[3], "response 3");
  answer_ok(streams[1], "response 1");
  EXPECT_EQ(server_.unanswered(), 0u);
  client_.pump();
  EXPECT_EQ(client_.reply(streams[0]).grpc("grpc-status"), "3");
  EXPECT_EQ(client_.reply(streams[0]).grpc("grpc-message"), "bad request 0");
  for (int i : {1, 2, 3}) {
    const Reply& reply = client_.reply(streams[size_t(i)]);
    EXPECT_EQ(reply.data, frame_message("response " + std::to_string(i))) << i;
    EXPECT_EQ(reply.trailers.at("grpc-status"), "0") << i;
    EXPECT_TRUE(reply.closed) << i;
  }
}

TEST_F(GrpcConnectionTest, CallAnsweredWithinOnCallIsAnswered) {
  GrpcConnection* server = nullptr;
  GrpcConnection direct({}, [&](GrpcIncoming& call) {
    server->answer(GrpcOutgoing{call.stream, 0, "", "echo " + call.message});
  });
  server = &direct;
  Client client(direct);
  int32_t stream = client.call("/p", "hi");
  client.pump();
  EXPECT_EQ(direct.unanswered(), 0u);
  EXPECT_EQ(client.reply(stream).data, frame_message("echo hi"));
  EXPECT_EQ(client.reply(stream).trailers.at("grpc-status"), "0");
}

TEST_F(GrpcConnectionTest, BytesThatAreNotHttp2EndTheConnectionWithAGoaway) {
  GrpcConnection raw({}, [&](GrpcIncoming& call) { calls_.push_back(call); });
  std::string garbage = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_FALSE(raw.receive(garbage.data(), garbage.size()));
  EXPECT_FALSE(raw.receive(garbage.data(), garbage.size()));  // still beyond saving
  std::string out;
  raw.produce(out, kAll);
  std::vector<Frame> sent = frames(out);
  auto goaway = std::find_if(sent.begin(), sent.end(),
                             [](const Frame& frame) { return frame.type == NGHTTP2_GOAWAY; });
  ASSERT_NE(goaway, sent.end());
  ASSERT_GE(goaway->payload.size(), 8u);
  EXPECT_EQ(goaway->payload[7], char(NGHTTP2_PROTOCOL_ERROR));
  EXPECT_TRUE(raw.finished());
  EXPECT_TRUE(calls_.empty());
  EXPECT_EQ(raw.unanswered(), 0u);
}

TEST_F(GrpcConnectionTest, ProtocolErrorAfterAValidPrefaceEndsTheConnection) {
  int32_t stream = client_.call("/p", "m");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_FALSE(server_.finished());
  // A SETTINGS frame of 7 bytes (not a multiple of 6) on stream 0.
  std::string bad(
      "\x00\x00\x07\x04\x00\x00\x00\x00\x00"
      "abcdefg",
      16);
  server_.receive(bad.data(), bad.size());
  std::string out;
  server_.produce(out, kAll);
  std::vector<Frame> sent = frames(out);
  auto goaway = std::find_if(sent.begin(), sent.end(),
                             [](const Frame& frame) { return frame.type == NGHTTP2_GOAWAY; });
  ASSERT_NE(goaway, sent.end());
  ASSERT_GE(goaway->payload.size(), 8u);
  EXPECT_EQ(goaway->payload[7], char(NGHTTP2_FRAME_SIZE_ERROR));
  EXPECT_TRUE(server_.finished());
  // The call taken before is answered into nothing.
  answer_ok(stream, "late");
  EXPECT_EQ(server_.unanswered(), 0u);
  out.clear();
  server_.produce(out, kAll);
  EXPECT_EQ(out, "");
}

TEST_F(GrpcConnectionTest, ShutDownSendsAGoawayAndStillAnswersTheCallsTaken) {
  int32_t stream = client_.call("/p", "before");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  server_.shut_down();
  client_.pump();
  EXPECT_TRUE(client_.goaway);
  EXPECT_EQ(client_.goaway_last_stream, stream);
  EXPECT_EQ(client_.goaway_error, uint32_t(NGHTTP2_NO_ERROR));
  EXPECT_FALSE(server_.finished());  // a call still owed its answer

  answer_ok(stream, "after");
  client_.pump();
  const Reply& reply = client_.reply(stream);
  EXPECT_EQ(reply.status(), 200);
  EXPECT_EQ(reply.data, frame_message("after"));
  EXPECT_EQ(reply.trailers.at("grpc-status"), "0");
  EXPECT_EQ(server_.unanswered(), 0u);
  EXPECT_TRUE(server_.finished());
}

TEST_F(GrpcConnectionTest, ShutDownWithNothingInFlightFinishes) {
  client_.pump();
  EXPECT_FALSE(server_.finished());
  server_.shut_down();
  client_.pump();
  EXPECT_TRUE(client_.goaway);
  EXPECT_EQ(client_.goaway_last_stream, 0);
  EXPECT_TRUE(server_.finished());
}

TEST_F(GrpcConnectionTest, CallSentAsTheShutDownGoesOutIsNotTaken) {
  int32_t before = client_.call("/p", "before");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  // shut_down() only submits the GOAWAY; the event loop writes it when the socket takes it, and
  // may read a new call first (as when the socket's send buffer is full).
  int32_t crossing = client_.call("/p", "crossing");
  server_.shut_down();
  client_.pump();
  EXPECT_TRUE(client_.goaway);
  EXPECT_EQ(client_.goaway_last_stream, before);
  // The GOAWAY told the client that the crossing call was not processed (it closes it as
  // refused, and may retry it elsewhere), so the server must not take it.
  EXPECT_TRUE(client_.reply(crossing).closed);
  EXPECT_EQ(client_.reply(crossing).close_error, uint32_t(NGHTTP2_REFUSED_STREAM));
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_EQ(server_.unanswered(), 1u);
  answer_ok(before, "after");
  client_.pump();
  EXPECT_EQ(client_.reply(before).trailers.at("grpc-status"), "0");
  EXPECT_FALSE(client_.responded(crossing));
  EXPECT_TRUE(server_.finished());
}

TEST_F(GrpcConnectionTest, CallArrivingAfterTheShutDownWentOutIsNotTaken) {
  int32_t before = client_.call("/p", "before");
  client_.pump();
  ASSERT_EQ(calls_.size(), 1u);
  server_.shut_down();
  std::string goaway;
  server_.produce(goaway, kAll);  // the GOAWAY leaves the server...
  int32_t crossing = client_.call("/p", "crossing");
  std::string request = client_.outgoing();  // ...as the client sends a new call
  server_.receive(request.data(), request.size());
  client_.incoming(goaway);
  EXPECT_TRUE(client_.goaway);
  EXPECT_EQ(client_.goaway_last_stream, before);
  EXPECT_EQ(client_.reply(crossing).close_error, uint32_t(NGHTTP2_REFUSED_STREAM));
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_EQ(server_.unanswered(), 1u);
  client_.pump();
  answer_ok(before, "after");
  client_.pump();
  EXPECT_EQ(client_.reply(before).trailers.at("grpc-status"), "0");
  EXPECT_FALSE(client_.responded(crossing));
}

TEST_F(GrpcConnectionTest, ClientGoingAwayFinishesTheConnection) {
  client_.pump();
  EXPECT_FALSE(server_.finished());
  client_.go_away();
  client_.pump();
  EXPECT_TRUE(server_.finished());
}

}  // namespace grpc_connection_test
}  // namespace kiln::net
