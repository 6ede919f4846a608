#include "kiln/serving/grpc/grpc_server.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "kiln/core/error.h"
#include "kiln/net/tcp_listen.h"

namespace kiln::serving {
namespace {

// Every loop's options: the loops sharing the port count their connections against one cap.
net::GrpcLoopOptions loop_options(const GrpcOptions& options) {
  net::GrpcLoopOptions loop;
  loop.limits.max_message_bytes = size_t(std::max<int64_t>(options.max_message_bytes, 0));
  loop.max_connections = options.max_connections;
  loop.shared_count = std::make_shared<net::ConnectionCount>();
  loop.read_timeout_seconds = options.read_timeout_seconds;
  loop.request_timeout_seconds = options.request_timeout_seconds;
  loop.limits.max_server_held_bytes = size_t(std::max<int64_t>(options.max_pending_bytes, 0));
  loop.limits.server_held = std::make_shared<std::atomic<size_t>>(0);
  loop.limits.max_server_unsent_bytes = loop.limits.max_server_held_bytes;
  loop.limits.server_unsent = std::make_shared<std::atomic<size_t>>(0);
  return loop;
}

}  // namespace

GrpcServer::GrpcServer(ServingParts parts, const GrpcOptions& options)
    : prediction_(CallContext{parts, options.token, &live_}, options.max_rows, &preparing_),
      preparing_(options.readers, size_t(std::max<int64_t>(options.max_pending_bytes, 0))),
      status_(CallContext{parts, options.token, &live_}),
      host_(options.host) {
  prediction_.add_methods(methods_);
  status_.add_methods(methods_);
  listen_fd_ = net::listen_tcp(options.host, options.port);
  if (listen_fd_ < 0)
    throw UsageError(
        fmt::format("cannot listen for gRPC on {} (--grpc-port): in use, or not an "
                    "address of this machine",
                    net::host_port(options.host, options.port)));
  port_ = net::bound_port(listen_fd_);
  auto handler = [this](net::GrpcIncoming& call, net::GrpcReply reply) {
    handle(call, std::move(reply));
  };
  net::GrpcLoopOptions each = loop_options(options);
  for (int i = 0; i < std::max(1, options.threads); ++i)
    loops_.push_back(std::make_unique<net::GrpcEventLoop>(listen_fd_, handler, each));
}

GrpcServer::~GrpcServer() {
  stop();
  loops_.clear();
}

std::string GrpcServer::address() const { return "grpc://" + net::host_port(host_, port_); }

void GrpcServer::handle(net::GrpcIncoming& call, net::GrpcReply reply) const {
  auto method = methods_.find(call.path);
  if (method == methods_.end())
    return reply(net::GrpcOutgoing{call.stream, int(net::GrpcCode::kUnimplemented),
                                   "kiln does not serve the method " + call.path, ""},
                 nullptr);
  method->second(call, std::move(reply));
}

void GrpcServer::serve() {
  std::vector<std::thread> more;
  for (size_t i = 1; i < loops_.size(); ++i)
    more.emplace_back([loop = loops_[i].get()] { loop->serve(); });
  loops_.front()->serve();
  for (std::thread& thread : more) thread.join();
}

void GrpcServer::stop() {
  std::call_once(stopped_, [this] {
    // The server's gate has drained by now (ModelServer::stop): clients are told to open no more
    // calls, the calls received are answered, and their answers sent before the loops end.
    for (auto& loop : loops_) loop->shut_down();
    live_.drain(std::chrono::minutes(1));
    for (auto& loop : loops_) loop->stop();
    // Closed now, not when the server is destroyed: a client connecting to a stopped server is
    // refused at once instead of waiting in the backlog for its deadline.
    close(listen_fd_);
    listen_fd_ = -1;
  });
}

ListenerFactory grpc_listener(GrpcOptions options) {
  return [options](ServingParts parts) -> std::unique_ptr<Listener> {
    return std::make_unique<GrpcServer>(parts, options);
  };
}

bool grpc_built() { return true; }

}  // namespace kiln::serving
