#include "kiln/serving/http_server.h"

#include <fmt/format.h>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kTokenNeeded =
    "this server needs `Authorization: Bearer TOKEN` (--token-file)";
constexpr const char* kHealthPath = "/healthz";
constexpr const char* kMetricsPath = "/monitoring/prometheus/metrics";

HttpLoopOptions loop_options(const HttpOptions& options) {
  HttpLoopOptions loop;
  loop.limits.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  loop.read_timeout_seconds = options.read_timeout_seconds;
  loop.max_connections = options.max_connections;
  return loop;
}

HttpAnswer json_error(int status, const std::string& message) {
  return {status, "application/json", error_body(message), nullptr};
}

}  // namespace

HttpServer::HttpServer(const RestHandler& handler, HttpOptions options)
    : handler_(handler),
      options_(std::move(options)),
      loop_([this](HttpRequest& request, HttpRespond respond) { route(request, respond); },
            loop_options(options_)) {}

bool HttpServer::authorized(const HttpRequest& request) const {
  if (options_.token.empty()) return true;
  const std::string* given = request.header("authorization");
  return given && *given == "Bearer " + options_.token;
}

void HttpServer::route(HttpRequest& request, const HttpRespond& respond) const {
  const std::string& path = request.path;
  bool get = request.method == "GET";
  if (path == kHealthPath && get)
    return respond({200, "application/json", "{\"status\": \"ok\"}\n", nullptr});
  bool api = path.rfind("/v1/", 0) == 0;
  if (!api && path != kMetricsPath && path != kHealthPath)
    return respond(json_error(404, fmt::format("no such endpoint: {} {}; kiln serve answers "
                                               "/v1/models/..., {} and {}",
                                               request.method, path, kHealthPath, kMetricsPath)));
  if (!api && !get)
    return respond(json_error(405, fmt::format("{} takes GET, not {}", path, request.method)));
  if (path != kHealthPath && !authorized(request))
    return respond(json_error(http_status(StatusCode::kUnauthenticated), kTokenNeeded));
  if (!api) return respond({200, "text/plain; version=0.0.4", handler_.metrics_text(), nullptr});
  handler_.handle_async(request.method, path, request.body, [respond](HttpReply reply) {
    respond({reply.status, "application/json", std::move(reply.body), std::move(reply.servable)});
  });
}

}  // namespace kiln::serving
