#include "kiln/board/board_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "kiln/board/board_api.h"
#include "kiln/board/board_page.h"
#include "kiln/board/report.h"
#include "kiln/core/error.h"

namespace kiln::board {
namespace {

void send_json(httplib::Response& response, const Json& body) {
  response.set_content(body.dump(), "application/json");
}

void refuse(httplib::Response& response, int status, const std::string& why) {
  response.status = status;
  send_json(response, {{"error", why}});
}

std::vector<runs::RunFilter> filters_of(const httplib::Request& request) {
  std::vector<runs::RunFilter> filters;
  for (size_t i = 0; i < request.get_param_value_count("filter"); ++i)
    filters.push_back(runs::RunFilter::parse(request.get_param_value("filter", i)));
  return filters;
}

}  // namespace

BoardServer::BoardServer(std::string root, const std::string& chart_js)
    : root_(std::move(root)),
      chart_js_(read_chart_js(chart_js)),
      server_(std::make_unique<httplib::Server>()) {
  runs::find_runs(root_);  // a root that is no folder is a UsageError now, not on each request
  // httplib's default adds SO_REUSEPORT, with which a second board on the same port would share
  // its requests in silence: address reuse after a restart only.
  server_->set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  add_routes();
}

BoardServer::~BoardServer() = default;

void BoardServer::add_routes() {
  server_->Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(board_page(), "text/html; charset=utf-8");
  });
  server_->Get("/chart.js", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(chart_js_, "text/javascript");
  });
  server_->Get("/api/runs", [this](const httplib::Request& request, httplib::Response& response) {
    try {
      send_json(response,
                runs_payload(root_, filters_of(request), request.get_param_value("sort")));
    } catch (const UsageError& e) {
      refuse(response, 400, e.what());
    }
  });
  server_->Get(
      "/api/metrics", [this](const httplib::Request& request, httplib::Response& response) {
        std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
        if (!run) return refuse(response, 404, "no such run under the board's root");
        int64_t from = 0;
        try {
          from = std::stoll(
              request.get_param_value("from").empty() ? "0" : request.get_param_value("from"));
        } catch (const std::exception&) {
          return refuse(response, 400, "from: expected a byte offset");
        }
        send_json(response, metric_rows(*run, from));
      });
  server_->Get("/api/images", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
    if (!run) return refuse(response, 404, "no such run under the board's root");
    send_json(response, run_images(*run));
  });
  server_->Get("/api/text", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
    if (!run) return refuse(response, 404, "no such run under the board's root");
    std::optional<std::string> text = run_text(*run, request.get_param_value("name"));
    if (!text) return refuse(response, 404, "no such file of the run");
    response.set_content(*text, "text/plain; charset=utf-8");
  });
}

int BoardServer::bind(const std::string& host, int port) {
  int bound =
      port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound <= 0)
    throw UsageError(
        fmt::format("cannot listen on {}:{} (in use, or not an address of this "
                    "machine); choose another with --port or --host",
                    host, port));
  return bound;
}

void BoardServer::serve() {
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

void BoardServer::stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stop_asked_ = true;
  // httplib ignores stop() until its accept loop runs, which begins a moment after serve() says
  // it is serving: ask again until serve() has returned.
  while (phase_ == Phase::kServing) {
    lock.unlock();
    server_->stop();
    lock.lock();
    ended_.wait_for(lock, std::chrono::milliseconds(10),
                    [this] { return phase_ == Phase::kEnded; });
  }
}

}  // namespace kiln::board
