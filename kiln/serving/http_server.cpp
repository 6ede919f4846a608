#include "kiln/serving/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "kiln/core/error.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kTokenNeeded =
    "this server needs `Authorization: Bearer TOKEN` (--token-file)";

void reply(httplib::Response& response, int status, const std::string& body) {
  response.status = status;
  response.set_content(body, "application/json");
}

}  // namespace

HttpServer::HttpServer(const RestHandler& handler, HttpOptions options)
    : handler_(handler),
      options_(std::move(options)),
      server_(std::make_unique<httplib::Server>()) {
  // Address reuse after a restart only: httplib's default SO_REUSEPORT would let a second server
  // on the same port share the requests in silence.
  server_->set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Answers go out at once: with Nagle's algorithm a small reply waits for the client's delayed
  // ACK, 40 ms a request.
  server_->set_tcp_nodelay(true);
  // httplib gives each open connection a thread while it lasts: with fewer threads than clients
  // keeping their connections, the rest wait whole requests for one.
  int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  server_->set_read_timeout(options_.read_timeout_seconds, 0);
  // httplib answers an oversized body by itself, with no body: say why, as the API's errors do.
  server_->set_error_handler([this](const httplib::Request&, httplib::Response& response) {
    if (!response.body.empty()) return;
    std::string why = response.status == 413
                          ? fmt::format("the request body is over {} bytes (--max-body-bytes)",
                                        options_.max_body_bytes)
                          : fmt::format("HTTP {}", response.status);
    response.set_content(error_body(why), "application/json");
  });
  add_routes();
}

HttpServer::~HttpServer() = default;

bool HttpServer::authorized(const httplib::Request& request) const {
  return options_.token.empty() ||
         request.get_header_value("Authorization") == "Bearer " + options_.token;
}

void HttpServer::add_routes() {
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("{\"status\": \"ok\"}\n", "application/json");
  });
  auto api = [this](const httplib::Request& request, httplib::Response& response) {
    if (!authorized(request))
      return reply(response, http_status(StatusCode::kUnauthenticated), error_body(kTokenNeeded));
    HttpReply answer = handler_.handle(request.method, request.path, request.body);
    reply(response, answer.status, answer.body);
  };
  server_->Get("/v1/.*", api);
  server_->Post("/v1/.*", api);
  server_->Get("/monitoring/prometheus/metrics", [this](const httplib::Request& request,
                                                        httplib::Response& response) {
    if (!authorized(request))
      return reply(response, http_status(StatusCode::kUnauthenticated), error_body(kTokenNeeded));
    response.set_content(handler_.metrics_text(), "text/plain; version=0.0.4");
  });
}

int HttpServer::bind(const std::string& host, int port) {
  int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0)
    throw UsageError(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                    "machine); choose another with --port or --host",
                    host, port));
  return bound;
}

void HttpServer::serve() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_asked_) return;
    phase_ = Phase::kServing;
  }
  server_->listen_after_bind();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = Phase::kEnded;
  }
  ended_.notify_all();
}

void HttpServer::stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_asked_ = true;
  // httplib ignores stop() until its accept loop runs, a moment after serve() says it is
  // serving: ask again until serve() has returned.
  while (phase_ == Phase::kServing) {
    lock.unlock();
    server_->stop();
    lock.lock();
    ended_.wait_for(lock, std::chrono::milliseconds(10),
                    [this] { return phase_ == Phase::kEnded; });
  }
}

}  // namespace kiln::serving
