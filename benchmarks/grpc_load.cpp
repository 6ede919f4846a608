// A gRPC load client as lean as wrk is for HTTP/1.1, for benchmarks/serve.sh: one HTTP/2
// connection (nghttp2's client session over a blocking socket, no event library) keeping
// CONCURRENCY unary calls of one framed request in flight for SECONDS. The request is held in
// memory; each answer's frames are read and its grpc-status checked. serve.sh also drives the port
// with h2load, which costs the machine more per call (it re-arms libev's epoll each round and
// reads its body file again for every request): on two cores, a client's cost is taken from the
// server it measures, and one call at a time its time is in every round trip.
//
//   grpc_load HOST PORT PATH REQUEST.grpc CONCURRENCY SECONDS
//
// Prints "CALLS_PER_SECOND MEAN_MS FAILED", FAILED counting the calls whose grpc-status was not 0
// or that did not end. serve.sh builds it: g++ -O2 -std=c++17 grpc_load.cpp -lnghttp2

#include <netdb.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <unordered_map>

namespace {

using Clock = std::chrono::steady_clock;

struct Load {
  std::string host, path, request;
  Clock::time_point start, end;
  nghttp2_session* session = nullptr;
  std::unordered_map<int32_t, Clock::time_point> began;  // stream -> when sent
  std::unordered_map<int32_t, size_t> offset;            // stream -> request bytes sent
  long done = 0, failed = 0;
  double latency_seconds = 0;
};

nghttp2_nv header(const char* name, const std::string& value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name)),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), std::strlen(name),
          value.size(), NGHTTP2_NV_FLAG_NONE};
}

ssize_t read_request(nghttp2_session*, int32_t stream, uint8_t* buffer, size_t size,
                     uint32_t* flags, nghttp2_data_source*, void* user) {
  Load& load = *static_cast<Load*>(user);
  size_t& at = load.offset[stream];
  size_t count = std::min(size, load.request.size() - at);
  std::memcpy(buffer, load.request.data() + at, count);
  at += count;
  if (at == load.request.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return ssize_t(count);
}

void send_call(Load& load) {
  static const std::string post = "POST", scheme = "http", grpc = "application/grpc",
                           trailers = "trailers";
  nghttp2_nv headers[] = {header(":method", post),      header(":scheme", scheme),
                          header(":path", load.path),   header(":authority", load.host),
                          header("content-type", grpc), header("te", trailers)};
  nghttp2_data_provider provider{};
  provider.read_callback = read_request;
  int32_t stream = nghttp2_submit_request(load.session, nullptr, headers, 6, &provider, nullptr);
  if (stream < 0) {
    std::fprintf(stderr, "grpc_load: %s\n", nghttp2_strerror(stream));
    std::exit(1);
  }
  load.began[stream] = Clock::now();
}

int on_header(nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t name_size,
              const uint8_t* value, size_t value_size, uint8_t, void* user) {
  bool status = name_size == 11 && std::memcmp(name, "grpc-status", 11) == 0;
  if (status && !(value_size == 1 && value[0] == '0')) ++static_cast<Load*>(user)->failed;
  return 0;
}

int on_close(nghttp2_session*, int32_t stream, uint32_t error, void* user) {
  Load& load = *static_cast<Load*>(user);
  Clock::time_point now = Clock::now();
  load.latency_seconds += std::chrono::duration<double>(now - load.began[stream]).count();
  load.began.erase(stream);
  load.offset.erase(stream);
  ++load.done;
  if (error != NGHTTP2_NO_ERROR) ++load.failed;
  if (now < load.end) send_call(load);
  return 0;
}

int connect_to(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = socket(found->ai_family, SOCK_STREAM, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  int yes = 1;
  if (fd >= 0) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  return fd;
}

// Writes what the session has to send; false when the connection failed.
bool write_out(Load& load, int fd) {
  const uint8_t* data = nullptr;
  for (ssize_t size; (size = nghttp2_session_mem_send(load.session, &data)) > 0;)
    for (ssize_t sent = 0; sent < size;) {
      ssize_t wrote = write(fd, data + sent, size_t(size - sent));
      if (wrote <= 0) return false;
      sent += wrote;
    }
  return true;
}

void run(Load& load, int fd, int concurrency, double seconds) {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);
  nghttp2_session_client_new(&load.session, callbacks, &load);
  nghttp2_session_callbacks_del(callbacks);
  nghttp2_submit_settings(load.session, NGHTTP2_FLAG_NONE, nullptr, 0);
  load.start = Clock::now();
  load.end = load.start +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (int i = 0; i < concurrency; ++i) send_call(load);
  static char buffer[64 << 10];
  while (!load.began.empty() && write_out(load, fd)) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got <= 0 ||
        nghttp2_session_mem_recv(load.session, reinterpret_cast<uint8_t*>(buffer), size_t(got)) < 0)
      break;
  }
  load.failed += long(load.began.size());  // cut off by a failed connection
  nghttp2_session_del(load.session);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: grpc_load HOST PORT PATH REQUEST.grpc CONCURRENCY SECONDS\n");
    return 2;
  }
  Load load;
  load.host = argv[1];
  load.path = argv[3];
  std::ifstream file(argv[4], std::ios::binary);
  load.request.assign(std::istreambuf_iterator<char>(file), {});
  int concurrency = std::atoi(argv[5]);
  int fd = connect_to(argv[1], argv[2]);
  if (fd < 0 || load.request.empty() || concurrency < 1) {
    std::fprintf(stderr, "grpc_load: cannot connect to %s:%s, or no request\n", argv[1], argv[2]);
    return 1;
  }
  run(load, fd, concurrency, std::atof(argv[6]));
  close(fd);
  double seconds = std::chrono::duration<double>(Clock::now() - load.start).count();
  double mean_ms = load.done ? load.latency_seconds / double(load.done) * 1000 : 0.0;
  std::printf("%.2f %.3f %ld\n", double(load.done) / seconds, mean_ms, load.failed);
  return load.done > 0 ? 0 : 1;
}
