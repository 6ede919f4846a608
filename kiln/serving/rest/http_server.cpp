#include "kiln/serving/rest/http_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

constexpr const char* kTokenNeeded =
    "this server needs one `Authorization: Bearer TOKEN` header (--token-file)";
constexpr const char* kHealthPath = "/healthz";
constexpr const char* kMetricsPath = "/monitoring/prometheus/metrics";

net::HttpLoopOptions loop_options(const HttpOptions& options) {
  net::HttpLoopOptions loop;
  loop.limits.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  loop.read_timeout_seconds = options.read_timeout_seconds;
  loop.request_timeout_seconds = options.request_timeout_seconds;
  loop.max_connections = options.max_connections;
  loop.max_pending_bytes = size_t(std::max<int64_t>(options.max_pending_bytes, 0));
  loop.log = options.log;
  return loop;
}

net::HttpAnswer json_error(int status, const std::string& message) {
  return {status, "application/json", error_body(message), nullptr};
}

}  // namespace

std::string read_token_file(const std::string& path) {
  std::string token = read_text_line(path);
  // A byte-order mark, which some editors put before a file's text, is no part of the token: kept,
  // it made the token one that no client sends.
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (std::string_view(token).substr(0, kByteOrderMark.size()) == kByteOrderMark)
    token.erase(0, kByteOrderMark.size());
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front())))
    token.erase(0, 1);
  if (token.empty()) throw UsageError(path + ": the token file's first line is empty");
  for (char c : token)
    if (static_cast<unsigned char>(c) <= ' ' || static_cast<unsigned char>(c) >= 0x7f)
      throw UsageError(fmt::format(
          "{}: the token holds a space, a control character or a byte outside ASCII (0x{:02x}); "
          "request headers and gRPC metadata carry printable ASCII only",
          path, static_cast<uint8_t>(c)));
  return token;
}

HttpServer::HttpServer(const RestHandler& handler, HttpOptions options)
    : handler_(handler),
      options_(std::move(options)),
      loop_(
          [this](net::HttpRequest& request, net::HttpRespond respond) { route(request, respond); },
          loop_options(options_)),
      readers_(options_.body_readers, size_t(std::max<int64_t>(options_.max_pending_bytes, 0))) {}

bool HttpServer::authorized(const net::HttpRequest& request) const {
  if (options_.token.empty()) return true;
  // Credentials sent twice are refused, whichever is right, on both APIs: readers in front of
  // kiln (a proxy, a log) may take the other one.
  const std::string* given = nullptr;
  for (const auto& [name, value] : request.headers) {
    if (name != "authorization") continue;
    if (given) return false;
    given = &value;
  }
  return given && *given == "Bearer " + options_.token;
}

void HttpServer::route(net::HttpRequest& request, const net::HttpRespond& respond) const {
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
  answer_api(request, respond);
}

void HttpServer::answer_api(net::HttpRequest& request, const net::HttpRespond& respond) const {
  auto done = [respond](HttpReply reply) {
    respond({reply.status, "application/json", std::move(reply.body), std::move(reply.servable)});
  };
  size_t bytes = request.body.size();
  bool small = bytes < OffLoopWorkers::kMinExamplesBytesOffLoop ||
               (bytes < OffLoopWorkers::kMinBodyBytesOffLoop &&
                !handler_.reads_examples(request.method, request.path));
  if (small)
    return handler_.handle_async(request.method, request.path, request.body, done,
                                 request.abandoned);
  // The workers drop the closure, body and all, once it has run (off_loop_workers.cpp).
  auto read = [this, method = request.method, path = request.path, body = std::move(request.body),
               done, abandoned = request.abandoned] {
    handler_.handle_async(method, path, body, done, abandoned);
  };
  if (!readers_.post(bytes, std::move(read)))
    respond(json_error(http_status(StatusCode::kResourceExhausted),
                       fmt::format("the server holds {} MiB of request bodies waiting to be read "
                                   "(--max-pending-bytes); try again later",
                                   options_.max_pending_bytes >> 20)));
}

}  // namespace kiln::serving
