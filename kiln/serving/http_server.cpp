#include "kiln/serving/http_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <cstdlib>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kTokenNeeded =
    "this server needs `Authorization: Bearer TOKEN` (--token-file)";

void reply(httplib::Response& response, int status, const std::string& body) {
  response.status = status;
  response.set_content(body, "application/json");
}

// Why httplib refused a request with a bare 400: most often a body that stopped short of its
// Content-Length (a slow client the read timeout dropped, or one that hung up), which httplib
// reads into `request.body` as far as it came.
std::string bad_request_reason(const httplib::Request& request, int read_timeout_seconds) {
  std::string length = request.get_header_value("Content-Length");
  char* end = nullptr;
  unsigned long long declared = length.empty() ? 0 : std::strtoull(length.c_str(), &end, 10);
  if (!length.empty() && end && *end == '\0' && request.body.size() < declared)
    return fmt::format(
        "the request body ended after {} of the {} bytes its Content-Length gives: the client "
        "sent nothing for {} s or closed the connection",
        request.body.size(), declared, read_timeout_seconds);
  return "the request is not well-formed HTTP/1.1";
}

}  // namespace

HttpServer::HttpServer(const RestHandler& handler, HttpOptions options)
    : handler_(handler), options_(std::move(options)) {
  httplib::Server& server = listener_.server();
  // Answers go out at once: with Nagle's algorithm a small reply waits for the client's delayed
  // ACK, 40 ms a request.
  server.set_tcp_nodelay(true);
  // httplib gives each open connection a thread while it lasts: with fewer threads than clients
  // keeping their connections, the rest wait whole requests for one.
  int threads = options_.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(static_cast<size_t>(options_.max_body_bytes));
  server.set_read_timeout(options_.read_timeout_seconds, 0);
  // httplib answers an oversized body by itself, with no body: say why, as the API's errors do.
  server.set_error_handler([this](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    std::string why =
        response.status == 413 ? fmt::format("the request body is over {} bytes (--max-body-bytes)",
                                             options_.max_body_bytes)
        : response.status == 400 ? bad_request_reason(request, options_.read_timeout_seconds)
                                 : fmt::format("HTTP {}", response.status);
    response.set_content(error_body(why), "application/json");
  });
  add_routes();
}

bool HttpServer::authorized(const httplib::Request& request) const {
  return options_.token.empty() ||
         request.get_header_value("Authorization") == "Bearer " + options_.token;
}

void HttpServer::add_routes() {
  httplib::Server& server = listener_.server();
  server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("{\"status\": \"ok\"}\n", "application/json");
  });
  auto api = [this](const httplib::Request& request, httplib::Response& response) {
    if (!authorized(request))
      return reply(response, http_status(StatusCode::kUnauthenticated), error_body(kTokenNeeded));
    HttpReply answer = handler_.handle(request.method, request.path, request.body);
    reply(response, answer.status, answer.body);
  };
  server.Get("/v1/.*", api);
  server.Post("/v1/.*", api);
  server.Get("/monitoring/prometheus/metrics", [this](const httplib::Request& request,
                                                      httplib::Response& response) {
    if (!authorized(request))
      return reply(response, http_status(StatusCode::kUnauthenticated), error_body(kTokenNeeded));
    response.set_content(handler_.metrics_text(), "text/plain; version=0.0.4");
  });
}

}  // namespace kiln::serving
