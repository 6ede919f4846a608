#pragma once
// A raw TCP connection to a local server, to send what no HTTP client library sends (half a
// request, two requests in one write) and to read its answers as they come.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace kiln::testing {

class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  void send_text(const std::string& text) {
    ASSERT_EQ(send(fd_, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
  }
  // Says the client will send nothing more (shuts its sending side), as `nc -N` does.
  void finish_sending() { shutdown(fd_, SHUT_WR); }
  // Drops the connection with a reset (RST), as a client killed or timed out does; nothing more
  // can be sent or read.
  void reset() {
    linger abort{1, 0};
    setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    close(fd_);
    fd_ = -1;
  }
  // One whole response (headers and the body its Content-Length gives), or what came before the
  // server closed the connection. Not to its end: the server keeps a connection open a while for
  // the next request.
  std::string read_response() {
    std::string response;
    while (!complete(pending_)) {
      char buffer[4096];
      ssize_t got = recv(fd_, buffer, sizeof buffer, 0);
      if (got <= 0) break;
      pending_.append(buffer, size_t(got));
    }
    size_t length = complete(pending_) ? whole_length(pending_) : pending_.size();
    response = pending_.substr(0, length);
    pending_.erase(0, length);
    return response;
  }
  // Whether the server has sent anything yet, without waiting.
  bool answered_yet() {
    char byte;
    return !pending_.empty() || recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
  }
  // Whether the server has closed the connection (reads to the end).
  bool closed_by_server() {
    char buffer[4096];
    ssize_t got;
    while ((got = recv(fd_, buffer, sizeof buffer, 0)) > 0) pending_.append(buffer, size_t(got));
    return got == 0;
  }

 private:
  static size_t whole_length(const std::string& response) {
    size_t headers_end = response.find("\r\n\r\n");
    size_t length_at = response.find("Content-Length: ");
    size_t length = length_at < headers_end ? std::stoul(response.substr(length_at + 16, 20)) : 0;
    return headers_end + 4 + length;
  }
  static bool complete(const std::string& response) {
    size_t headers_end = response.find("\r\n\r\n");
    return headers_end != std::string::npos && response.size() >= whole_length(response);
  }
  int fd_;
  bool connected_ = false;
  std::string pending_;  // received beyond the responses read
};

}  // namespace kiln::testing
