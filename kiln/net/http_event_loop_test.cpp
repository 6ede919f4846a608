// The event loop on a real socket, with a handler that echoes requests or answers them later from
// another thread: pipelined requests, `Expect: 100-continue`, chunked bodies, HTTP/1.0, late
// answers, and answers to clients that have gone.

#include "kiln/net/http_event_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/support/raw_connection.h"

namespace kiln::net {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using testing::RawConnection;
using ::testing::StartsWith;

class EventLoop : public ::testing::Test {
 protected:
  ~EventLoop() override {
    if (!loop_) return;
    loop_->stop();
    thread_.join();
  }
  // Serves with `handler`; by default each request is answered at once with what it was.
  void start(HttpHandler handler = nullptr) {
    if (!handler)
      handler = [](HttpRequest& request, HttpRespond respond) {
        respond({200, "text/plain", request.method + " " + request.path + " " + request.body, {}});
      };
    HttpLoopOptions options = options_;
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mutex_);
      logged_.push_back(line);
      arrived_.notify_all();
    };
    loop_ = std::make_unique<HttpEventLoop>(std::move(handler), options);
    port_ = loop_->bind("127.0.0.1", 0);
    thread_ = std::thread([this] { loop_->serve(); });
  }
  // Serves with a handler that keeps each request's HttpRespond for the test to call.
  void start_deferred() {
    start([this](HttpRequest& request, HttpRespond respond) {
      std::lock_guard<std::mutex> lock(mutex_);
      deferred_.push_back(std::move(respond));
      abandoned_.push_back(request.abandoned);
      arrived_.notify_all();
    });
  }
  // The HttpRespond of the `n`th request (from 1), once it has come.
  HttpRespond deferred(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.wait(lock, [&] { return deferred_.size() >= n; });
    return deferred_[n - 1];
  }

  HttpLoopOptions options_;  // what start() serves with, but for the log
  std::unique_ptr<HttpEventLoop> loop_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<HttpRespond> deferred_;
  std::vector<Abandoned> abandoned_;  // each deferred request's mark
  std::vector<std::string> logged_;
};

TEST_F(EventLoop, PipelinedRequestsAreAnsweredInTheirOrder) {
  start();
  RawConnection client(port_);
  client.send_text(
      "GET /first HTTP/1.1\r\nHost: k\r\n\r\nPOST /second HTTP/1.1\r\nHost: k\r\nContent-Length: "
      "2\r\n\r\nhi");
  EXPECT_THAT(client.read_response(), EndsWith("GET /first "));
  EXPECT_THAT(client.read_response(), EndsWith("POST /second hi"));
}

TEST_F(EventLoop, ExpectContinueIsAnsweredBeforeTheBodyIsSent) {
  start();
  RawConnection client(port_);
  client.send_text(
      "POST /p HTTP/1.1\r\nHost: k\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  std::string interim = client.read_response();
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  client.send_text("body");
  EXPECT_THAT(client.read_response(), EndsWith("POST /p body"));
}

TEST_F(EventLoop, AChunkedBodyArrivesWhole) {
  start();
  RawConnection client(port_);
  client.send_text("POST /p HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n");
  client.send_text("4\r\ndefg\r\n0\r\n\r\n");
  EXPECT_THAT(client.read_response(), EndsWith("POST /p abcdefg"));
}

TEST_F(EventLoop, AnHttp10RequestIsAnsweredAndItsConnectionClosed) {
  start();
  RawConnection client(port_);
  client.send_text("GET /old HTTP/1.0\r\n\r\n");
  std::string answer = client.read_response();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(EventLoop, AClientThatHasStoppedSendingGetsTheAnswerToItsRequest) {
  start_deferred();
  RawConnection client(port_);
  client.send_text("POST /p HTTP/1.1\r\nHost: k\r\nContent-Length: 2\r\n\r\nhi");
  client.finish_sending();
  HttpRespond respond = deferred(1);
  respond({200, "text/plain", "late", {}});
  std::string answer = client.read_response();
  EXPECT_THAT(answer, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(answer, EndsWith("\r\n\r\nlate"));
  EXPECT_TRUE(client.closed_by_server());
}

// An answer bigger than the sockets hold waits for room more than once; the client's end of
// input, seen meanwhile, must not stop that wait. It did, and the read timeout then cut the answer
// (the board's 21 MB config.yaml came back as 8.3 MB): here that timeout is a second.
TEST_F(EventLoop, ALargeAnswerToAClientThatHasStoppedSendingArrivesWhole) {
  options_.read_timeout_seconds = 1;
  const std::string big(32 << 20, 'k');
  start([&big](HttpRequest&, HttpRespond respond) { respond({200, "text/plain", big, {}}); });
  RawConnection client(port_);
  client.send_text("GET /big HTTP/1.1\r\nHost: k\r\n\r\n");
  client.finish_sending();
  std::string answer = client.read_response();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(answer.size() - answer.find("\r\n\r\n") - 4, big.size());
  EXPECT_TRUE(client.closed_by_server());
}

// `printf 'GET /a ...GET /b ...GET /c ...' | nc -N`: every request sent whole is answered, then the
// connection is closed. Whether the last answer carries `Connection: close` depends on whether the
// server saw the end of input before it answered, which is the scheduler's choice.
TEST_F(EventLoop, PipelinedRequestsOfAClientThatHasStoppedSendingAreAllAnswered) {
  start();
  RawConnection client(port_);
  client.send_text(
      "GET /a HTTP/1.1\r\nHost: k\r\n\r\nGET /b HTTP/1.1\r\nHost: k\r\n\r\n"
      "GET /c HTTP/1.1\r\nHost: k\r\n\r\n");
  client.finish_sending();
  EXPECT_THAT(client.read_response(), EndsWith("GET /a "));
  EXPECT_THAT(client.read_response(), EndsWith("GET /b "));
  EXPECT_THAT(client.read_response(), EndsWith("GET /c "));
  EXPECT_TRUE(client.closed_by_server());
}

// No client is left to tell; the server's log says what came of the request.
TEST_F(EventLoop, ABodyCutShortByACloseIsLogged) {
  start();
  {
    RawConnection client(port_);
    client.send_text("POST /p HTTP/1.1\r\nHost: k\r\nContent-Length: 10\r\n\r\nabc");
    client.finish_sending();
    EXPECT_TRUE(client.closed_by_server());
  }
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait(lock, [&] { return !logged_.empty(); });
  EXPECT_EQ(logged_[0],
            "a request was cut short: the request body ended after 3 of the 10 bytes its "
            "Content-Length gives: the client closed the connection");
}

TEST_F(EventLoop, AMalformedRequestIsAnsweredWithItsReasonAndTheConnectionClosed) {
  start();
  RawConnection client(port_);
  client.send_text("GET / HTTP/1.1\r\nHost: k\r\nTransfer-Encoding: gzip\r\n\r\n");
  std::string answer = client.read_response();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 501 Not Implemented\r\n"));
  EXPECT_THAT(answer, HasSubstr(R"({"error":"Transfer-Encoding \"gzip\" is not supported)"));
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(EventLoop, AnAnswerGivenLaterOnAnotherThreadReachesItsClient) {
  start_deferred();
  RawConnection first(port_), second(port_);
  first.send_text("GET /1 HTTP/1.1\r\nHost: k\r\n\r\n");
  HttpRespond respond_first = deferred(1);
  second.send_text("GET /2 HTTP/1.1\r\nHost: k\r\n\r\n");  // served while the first waits
  HttpRespond respond_second = deferred(2);
  std::thread([&] { respond_second({200, "text/plain", "two", {}}); }).join();
  EXPECT_THAT(second.read_response(), EndsWith("\r\n\r\ntwo"));
  std::thread([&] { respond_first({201, "text/plain", "one", {}}); }).join();
  std::string answer = first.read_response();
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 201 "));
  EXPECT_THAT(answer, EndsWith("\r\n\r\none"));
}

TEST_F(EventLoop, AnAnswerForAClientThatHasGoneIsDroppedAndOthersAreServed) {
  start_deferred();
  auto held = std::make_shared<int>(7);
  {
    RawConnection gone(port_);
    gone.send_text("GET /1 HTTP/1.1\r\nHost: k\r\n\r\n");
    deferred(1);
  }
  RawConnection next(port_);
  next.send_text("GET /2 HTTP/1.1\r\nHost: k\r\n\r\n");
  HttpRespond respond_next = deferred(2);
  deferred(1)({200, "text/plain", "nobody reads this", held});
  respond_next({200, "text/plain", "yours", {}});
  EXPECT_THAT(next.read_response(), EndsWith("\r\n\r\nyours"));
  EXPECT_EQ(held.use_count(), 1);  // what the dropped answer held has been let go
}

// Requests still arriving are counted as their buffers hold them, which grow by doubling:
// counted by their bytes, 40 stalled bodies of 15 MB held 1.7 times --max-pending-bytes. A body
// of 150 KiB read in chunks of at most 64 KiB needs a buffer of 172 KiB or more.
TEST_F(EventLoop, RequestBytesAreCountedAsTheirBufferHoldsThem) {
  options_.max_pending_bytes = 160 << 10;
  start();
  RawConnection client(port_);
  std::string body(150 << 10, 'x');
  client.send_text("POST /big HTTP/1.1\r\nHost: k\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_THAT(client.read_response(), StartsWith("HTTP/1.1 413 "));
  RawConnection small(port_);  // a small request is still let past the cap
  small.send_text("GET /healthz HTTP/1.1\r\nHost: k\r\n\r\n");
  EXPECT_THAT(small.read_response(), EndsWith("GET /healthz "));
}

// A request whose client reset its connection is marked, so that the model server drops its
// queued work (serving/batcher.h); a client still connected keeps its mark clear.
TEST_F(EventLoop, ARequestWhoseClientResetTheConnectionIsMarkedAbandoned) {
  start_deferred();
  RawConnection staying(port_), leaving(port_);
  staying.send_text("GET /1 HTTP/1.1\r\nHost: k\r\n\r\n");
  deferred(1);
  leaving.send_text("GET /2 HTTP/1.1\r\nHost: k\r\n\r\n");
  deferred(2);
  Abandoned staying_mark, leaving_mark;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    staying_mark = abandoned_[0];
    leaving_mark = abandoned_[1];
  }
  ASSERT_TRUE(leaving_mark);
  EXPECT_FALSE(is_abandoned(leaving_mark));
  leaving.reset();
  while (!is_abandoned(leaving_mark)) std::this_thread::yield();  // the loop sees the reset
  EXPECT_FALSE(is_abandoned(staying_mark));
  deferred(1)({200, "text/plain", "still yours", {}});
  EXPECT_THAT(staying.read_response(), EndsWith("\r\n\r\nstill yours"));
}

}  // namespace
}  // namespace kiln::net
