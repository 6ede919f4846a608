#include "kiln/serving/grpc/grpc_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>

#include <absl/synchronization/mutex.h>

#include "kiln/core/error.h"

namespace kiln::serving {
namespace {

std::string host_port(const std::string& host, int port) {
  bool ipv6 = host.find(':') != std::string::npos;
  return ipv6 ? fmt::format("[{}]:{}", host, port) : fmt::format("{}:{}", host, port);
}

}  // namespace

GrpcServer::GrpcServer(ServingParts parts, const GrpcOptions& options)
    : prediction_(CallContext{parts, options.token, &live_}, options.max_rows),
      status_(CallContext{parts, options.token, &live_}),
      host_(options.host),
      threads_(std::max(1, options.threads)) {
  // Debian's Abseil checks every lock gRPC takes for deadlock cycles (its debug default), a few
  // percent of a call's time; TensorFlow Serving's release builds do not.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  grpc::ServerBuilder builder;
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(std::min<int64_t>(options.max_message_bytes, INT_MAX)));
  builder.SetMaxSendMessageSize(INT_MAX);
  builder.AddListeningPort(host_port(options.host, options.port), grpc::InsecureServerCredentials(),
                           &port_);
  builder.RegisterService(prediction_.service());
  builder.RegisterService(status_.service());
  queue_ = builder.AddCompletionQueue();
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0)
    throw UsageError(
        fmt::format("cannot listen for gRPC on {} (--grpc-port): in use, or not an "
                    "address of this machine",
                    host_port(options.host, options.port)));
  prediction_.await_calls(queue_.get());
  status_.await_calls(queue_.get());
}

GrpcServer::~GrpcServer() {
  stop();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!polled_) poll();  // the calls still asked for come back, refused, and delete themselves
}

std::string GrpcServer::address() const { return "grpc://" + host_port(host_, port_); }

void GrpcServer::poll() {
  void* tag = nullptr;
  bool ok = false;
  while (queue_->Next(&tag, &ok)) static_cast<GrpcCall*>(tag)->proceed(ok);
}

void GrpcServer::serve() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    polled_ = true;
  }
  std::vector<std::thread> more;
  for (int i = 1; i < threads_; ++i) more.emplace_back([this] { poll(); });
  poll();
  for (std::thread& thread : more) thread.join();
}

void GrpcServer::stop() {
  std::call_once(stopped_, [this] {
    // The server's gate has drained by now (ModelServer::stop): what is left gets a few seconds,
    // then is cancelled. Calls received are answered before the queue shuts: an answer sent to a
    // queue that has shut is an error.
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    live_.drain(std::chrono::minutes(1));
    queue_->Shutdown();
  });
}

ListenerFactory grpc_listener(GrpcOptions options) {
  return [options](ServingParts parts) -> std::unique_ptr<Listener> {
    return std::make_unique<GrpcServer>(parts, options);
  };
}

bool grpc_built() { return true; }

}  // namespace kiln::serving
