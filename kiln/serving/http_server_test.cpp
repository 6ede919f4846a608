// `kiln serve`'s HTTP side on a real socket, over a fake servable: a client that stalls in the
// middle of its body is answered with a 400 saying so once the read timeout passes, one that never
// sends a request is dropped, and other clients are answered meanwhile.

#include "kiln/serving/http_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "kiln/core/json.h"
#include "tests/support/fake_servable.h"

namespace kiln::serving {
namespace {

using ::testing::HasSubstr;

// A raw TCP connection, to send what no HTTP client library sends: half a request.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() { close(fd_); }
  bool connected() const { return connected_; }
  void send_text(const std::string& text) {
    ASSERT_EQ(send(fd_, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
  }
  // One whole response (headers and the body its Content-Length gives), or what came before the
  // server closed the connection. Not to its end: the server keeps a connection open a while for
  // the next request.
  std::string read_response() {
    std::string all;
    char buffer[4096];
    for (ssize_t n; !complete(all) && (n = recv(fd_, buffer, sizeof buffer, 0)) > 0;)
      all.append(buffer, size_t(n));
    return all;
  }

 private:
  static bool complete(const std::string& response) {
    size_t headers_end = response.find("\r\n\r\n");
    if (headers_end == std::string::npos) return false;
    size_t length_at = response.find("Content-Length: ");
    size_t length = length_at < headers_end ? std::stoul(response.substr(length_at + 16)) : 0;
    return response.size() >= headers_end + 4 + length;
  }
  int fd_;
  bool connected_ = false;
};

class ServingHttp : public ::testing::Test {
 protected:
  ServingHttp() { table_.set("half", {{1, std::make_shared<testing::HalfPlusTwo>()}}); }
  ~ServingHttp() override {
    if (!server_) return;
    server_->stop();
    thread_.join();
  }
  // Serves with a read timeout of `read_timeout_seconds` (1 s: the timeout tests wait that long).
  void start(int read_timeout_seconds) {
    HttpOptions options;
    options.read_timeout_seconds = read_timeout_seconds;
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

TEST_F(ServingHttp, AClientThatSendsNoRequestIsDropped) {
  start(1);
  RawConnection silent(port_);
  ASSERT_TRUE(silent.connected());
  silent.send_text("POST /v1/models/half:pre");
  EXPECT_EQ(silent.read_response(), "");  // closed without an answer to half a request line
  expect_answered();
}

TEST_F(ServingHttp, GarbageIsA400) {
  start(10);
  RawConnection garbage(port_);
  ASSERT_TRUE(garbage.connected());
  garbage.send_text("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_THAT(garbage.read_response(), HasSubstr("HTTP/1.1 400"));
  expect_answered();
}

}  // namespace
}  // namespace kiln::serving
