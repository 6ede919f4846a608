#include "kiln/serving/grpc/grpc_server.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>

#include "kiln/core/error.h"

namespace kiln::serving {
namespace {

std::string host_port(const std::string& host, int port) {
  bool ipv6 = host.find(':') != std::string::npos;
  return ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

GrpcServer::GrpcServer(ServingParts parts, const GrpcOptions& options)
    : prediction_(CallContext{parts, options.token, &releaser_}, options.max_rows),
      status_(CallContext{parts, options.token, &releaser_}),
      host_(options.host) {
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<int64_t>(options.max_message_bytes, INT_MAX)));
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.AddListeningPort(host_port(options.host, options.port), grpc::InsecureServerCredentials(),
                           &port_);
  builder.RegisterService(&prediction_);
  builder.RegisterService(&status_);
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0)
    throw UsageError(
        fmt::format("cannot listen for gRPC on {} (--grpc-port): in use, or not an "
                    "address of this machine",
                    host_port(options.host, options.port)));
}

GrpcServer::~GrpcServer() { stop(); }

std::string GrpcServer::address() const { return "grpc://" + host_port(host_, port_); }

void GrpcServer::stop() {
  // The server's gate has drained by now (ModelServer::stop): what is left gets a few seconds.
  std::call_once(stopped_, [this] {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  });
}

ListenerFactory grpc_listener(GrpcOptions options) {
  return [options](ServingParts parts) -> std::unique_ptr<Listener> {
    return std::make_unique<GrpcServer>(parts, options);
  };
}

bool grpc_built() { return true; }

}  // namespace kiln::serving
