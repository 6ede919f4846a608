// `kiln serve`'s HTTP side on a real socket, over a fake servable: a client that stalls in the
// middle of its body is answered with a 400 saying so once the read timeout passes, one that never
// sends a request is dropped, and other clients are answered meanwhile; what is not the API's is
// refused in its words.

#include "kiln/serving/rest/http_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "tests/support/fake_servable.h"
#include "tests/support/raw_connection.h"
#include "tests/support/temp_dir.h"

namespace kiln::serving {
namespace {

using ::testing::HasSubstr;

using testing::RawConnection;

// FeatureScorer that notes the thread its columns encode on.
class ColumnsThread : public testing::FeatureScorer {
 public:
  class Encoder : public testing::FeatureScorer::Encoder {
   public:
    explicit Encoder(ColumnsThread& owner) : owner_(owner) {}
    HostTensors encode(const std::vector<io::Features>& examples) const override {
      std::lock_guard<std::mutex> lock(owner_.mutex_);
      owner_.threads_.push_back(std::this_thread::get_id());
      return testing::FeatureScorer::Encoder::encode(examples);
    }

   private:
    ColumnsThread& owner_;
  };
  const ExampleEncoder* examples() const override { return &noting_; }
  std::vector<std::thread::id> threads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread::id> threads_;
  Encoder noting_{*this};
};

class ServingHttp : public ::testing::Test {
 protected:
  ServingHttp() {
    table_.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()}});
    table_.set("columns", {{1, columns_}});
  }
  ~ServingHttp() override {
    if (!server_) return;
    server_->stop();
    thread_.join();
  }
  // Serves with a read timeout of `read_timeout_seconds` (1 s: the timeout tests wait that long).
  void start(int read_timeout_seconds, const std::string& token = "",
             int64_t max_pending_bytes = int64_t(256) << 20) {
    HttpOptions options;
    options.read_timeout_seconds = read_timeout_seconds;
    options.request_timeout_seconds = request_timeout_seconds_;
    options.token = token;
    options.max_pending_bytes = max_pending_bytes;
    server_ = std::make_unique<HttpServer>(handler_, options);
    port_ = server_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->serve(); });
  }
  // A whole request from a well-behaved client.
  void expect_answered() {
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result =
        client.Post("/v1/models/half:predict", R"({"instances": [[1.0]]})", "application/json");
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 200);
    EXPECT_EQ(Json::parse(result->body), Json::parse(R"({"predictions": [[2.5]]})"));
  }

  int request_timeout_seconds_ = 30;
  std::shared_ptr<ColumnsThread> columns_ = std::make_shared<ColumnsThread>();
  ModelTable table_;
  RestHandler handler_{table_, RestOptions{4}};
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(ServingHttp, AClientThatStallsInItsBodyGetsA400SayingSoAndOthersAreServed) {
  start(1);
  RawConnection slow(port_);
  ASSERT_TRUE(slow.connected());
  slow.send_text(
      "POST /v1/models/half:predict HTTP/1.1\r\nHost: kiln\r\nContent-Type: application/json\r\n"
      "Content-Length: 100\r\n\r\n{\"instances\"");
  expect_answered();  // while the slow one holds its connection
  std::string answer = slow.read_response();
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(answer, HasSubstr("the request body ended after 12 of the 100 bytes its "
                                "Content-Length gives: the client sent nothing for 1 s"));
  expect_answered();
}

// A request trickled in a byte at a time, never silent for the read timeout, held its connection
// for as long as its client liked: it must come whole within the request timeout.
TEST_F(ServingHttp, ARequestNotWholeWithinTheRequestTimeoutIsAnswered408) {
  request_timeout_seconds_ = 1;
  start(60);  // only the request timeout can end it
  RawConnection slow(port_);
  ASSERT_TRUE(slow.connected());
  slow.send_text(
      "POST /v1/models/half:predict HTTP/1.1\r\nHost: kiln\r\nContent-Type: application/json\r\n"
      "Content-Length: 100\r\n\r\n{\"instances\"");
  auto began = std::chrono::steady_clock::now();
  std::string answer = slow.read_response();
  EXPECT_GE(std::chrono::steady_clock::now() - began, std::chrono::milliseconds(900));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 408"));
  EXPECT_THAT(answer, HasSubstr("did not arrive whole within the server's request timeout (1 s"));
  expect_answered();
}

TEST_F(ServingHttp, AClientThatSendsNoRequestIsDropped) {
  start(1);
  RawConnection silent(port_);
  ASSERT_TRUE(silent.connected());
  silent.send_text("POST /v1/models/half:pre");
  EXPECT_EQ(silent.read_response(), "");  // closed without an answer to half a request line
  expect_answered();
}

// Two Authorization headers, a wrong one then the right one, were let through by gRPC and not by
// REST (which read the first): credentials sent twice are refused on both APIs, in either order.
TEST_F(ServingHttp, CredentialsSentTwiceAreRefusedWhicheverIsRight) {
  start(10, "secret");
  const std::string request =
      "POST /v1/models/half:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 22\r\n";
  const std::string body = "\r\n{\"instances\": [[1.0]]}";
  for (const char* headers : {"Authorization: Bearer wrong\r\nAuthorization: Bearer secret\r\n",
                              "Authorization: Bearer secret\r\nAuthorization: Bearer wrong\r\n",
                              "Authorization: Bearer secret\r\nAuthorization: Bearer secret\r\n"}) {
    SCOPED_TRACE(headers);
    RawConnection twice(port_);
    twice.send_text(request + headers + body);
    std::string answer = twice.read_response();
    EXPECT_THAT(answer, HasSubstr("HTTP/1.1 401"));
    EXPECT_THAT(answer, HasSubstr("this server needs one `Authorization: Bearer TOKEN` header"));
  }
  RawConnection once(port_);
  once.send_text(request + "Authorization: Bearer secret\r\n" + body);
  EXPECT_THAT(once.read_response(), HasSubstr("HTTP/1.1 200"));
}

// A token file that an editor began with a UTF-8 byte-order mark made the mark part of the token,
// so no client was ever let in: the mark is dropped; other bytes outside ASCII are refused.
TEST(TokenFile, AByteOrderMarkIsDroppedAndOtherBytesOutsideAsciiRefused) {
  testing::TempDir dir;
  EXPECT_EQ(read_token_file(dir.write("bom", "\xEF\xBB\xBFsecret\r\n")), "secret");
  EXPECT_EQ(read_token_file(dir.write("plain", "  secret\nsecond line\n")), "secret");
  for (const char* bad : {"caf\xC3\xA9", "se cret", "\xEF\xBB\xBF\xEF\xBB\xBFsecret"}) {
    try {
      read_token_file(dir.write("bad", std::string(bad) + "\n"));
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("request headers and gRPC metadata carry printable ASCII"));
    }
  }
}

// Bodies still arriving were bounded per request only: many clients each holding most of a body
// could hold the server's memory. All connections together hold at most --max-pending-bytes; the
// one that would pass it is refused, naming the flag, and others are served.
TEST_F(ServingHttp, RequestBytesStillArrivingAreCappedForAllClientsTogether) {
  start(10, "", 40000);
  const std::string head =
      "POST /v1/models/half:predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n";
  RawConnection holding(port_);
  std::string first = head + std::string(30000, ' ');
  holding.send_text(first);
  expect_answered();  // a request after it is answered: the loop has read what it sent
  RawConnection over(port_);
  over.send_text(head + std::string(30000, ' '));
  std::string answer = over.read_response();
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 413"));
  EXPECT_THAT(answer, HasSubstr("(40000, --max-pending-bytes)"));
  expect_answered();  // a small request fits beside the one held
  // Filled to 10 bytes short of the cap, /healthz was answered 413: a small request (at most
  // 8 KiB held) is let past it.
  RawConnection fuller(port_);
  fuller.send_text(head + std::string(40000 - 10 - first.size() - head.size(), ' '));
  expect_answered();  // the loop has read what `fuller` sent
  RawConnection health(port_);
  health.send_text("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(health.read_response(), HasSubstr("HTTP/1.1 200"));
}

// Sixteen JSON bodies of a million keys each held the loop, /healthz included, for 15 s while they
// were read: such bodies are read off the loop. While one is read, /healthz is asked again and
// again: none of its answers waits for more than a small part of the time the body takes (read
// on the loop, one waited nearly all of it).
TEST_F(ServingHttp, BigBodiesAreReadOffTheLoopWhichAnswersMeanwhile) {
  using Clock = std::chrono::steady_clock;
  start(10);
  std::string body = R"({"instances": [[1.0]], "padding": {)";
  for (int key = 0; key < 1000000; ++key) body += "\"k" + std::to_string(key) + "\": 0, ";
  body += R"("end": 0})";  // the last brace missing: refused once read whole
  RawConnection big(port_);
  big.send_text("POST /v1/models/half:predict HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                std::to_string(body.size()) + "\r\n\r\n" + body);
  Clock::time_point sent = Clock::now();
  Clock::duration longest_wait{};
  int asked = 0;
  while (!big.answered_yet()) {
    RawConnection health(port_);
    Clock::time_point asked_at = Clock::now();
    health.send_text("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_THAT(health.read_response(), HasSubstr("HTTP/1.1 200"));
    longest_wait = std::max(longest_wait, Clock::now() - asked_at);
    asked += 1;
  }
  Clock::duration reading = Clock::now() - sent;
  EXPECT_THAT(big.read_response(), HasSubstr("HTTP/1.1 400"));
  EXPECT_GT(asked, 1);
  EXPECT_LT(longest_wait * 4, reading)
      << "the longest /healthz took " << std::chrono::duration<double>(longest_wait).count()
      << " s of the body's " << std::chrono::duration<double>(reading).count() << " s";
}

// Examples go through a model's columns row by row: 3,000 calls of 1,000 of them (32 KB each)
// held gRPC's loop 5.7 s. A body of examples of 4 KiB or more is encoded on a worker, a small
// one on the loop (sooner than a worker would start on it); tensors wait for 64 KiB.
TEST_F(ServingHttp, ExamplesOfFourKibOrMoreAreEncodedOffTheLoop) {
  start(10);
  auto classify = [&](size_t padding) {
    std::string body = R"({"examples": [{"size": 2, "color": "red", "note": ")" +
                       std::string(padding, 'n') + R"("}]})";
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result = client.Post("/v1/models/columns:classify", body, "application/json");
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 200) << result->body;
  };
  classify(10);
  classify(8 << 10);
  std::vector<std::thread::id> threads = columns_->threads();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0], thread_.get_id());  // the loop's
  EXPECT_NE(threads[1], thread_.get_id());
}

TEST_F(ServingHttp, GarbageIsA400) {
  start(10);
  RawConnection garbage(port_);
  ASSERT_TRUE(garbage.connected());
  garbage.send_text("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_THAT(garbage.read_response(), HasSubstr("HTTP/1.1 400"));
  expect_answered();
}

// A body nested 30,000 deep (60 KB) once overflowed the server's stack: now a 400, and the server
// answers the next request.
TEST_F(ServingHttp, ADeeplyNestedBodyIsA400AndTheServerGoesOn) {
  start(10);
  httplib::Client client("127.0.0.1", port_);
  std::string deep = "{\"instances\": " + std::string(30000, '[') + std::string(30000, ']') + "}";
  httplib::Result result = client.Post("/v1/models/half:predict", deep, "application/json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  EXPECT_THAT(Json::parse(result->body).at("error").get<std::string>(),
              HasSubstr("nested more than 64 levels deep"));
  expect_answered();
}

TEST_F(ServingHttp, WhatIsNotAnEndpointIsRefusedNamingTheEndpoints) {
  start(10);
  httplib::Client client("127.0.0.1", port_);
  httplib::Result missing = client.Get("/v2/models");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_THAT(Json::parse(missing->body).at("error").get<std::string>(),
              HasSubstr("no such endpoint: GET /v2/models; kiln serve answers /v1/models/..."));
  httplib::Result posted = client.Post("/healthz", "{}", "application/json");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 405);
  EXPECT_THAT(posted->body, HasSubstr("/healthz takes GET, not POST"));
  httplib::Result healthy = client.Get("/healthz");
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
}

}  // namespace
}  // namespace kiln::serving
