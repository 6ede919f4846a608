#include "kiln/board/board_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <charconv>
#include <thread>

#include "kiln/board/board_api.h"
#include "kiln/board/board_page.h"
#include "kiln/board/board_studies.h"
#include "kiln/board/report.h"
#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

namespace kiln::board {
namespace {

// With a charset, which cpp-httplib does not gzip: its compressor took a second for a board's
// half a megabyte, many times what sending it takes on any network a board is read over.
constexpr const char* kJsonType = "application/json; charset=utf-8";

void send_json(httplib::Response& response, const Json& body) {
  response.set_content(dump_json(body), kJsonType);
}

void refuse(httplib::Response& response, int status, const std::string& why) {
  response.status = status;
  send_json(response, {{"error", why}});
}

std::vector<run::RunFilter> filters_of(const httplib::Request& request) {
  std::vector<run::RunFilter> filters;
  for (size_t i = 0; i < request.get_param_value_count("filter"); ++i)
    filters.push_back(run::RunFilter::parse(request.get_param_value("filter", i)));
  return filters;
}

// A parameter that is a whole number >= 0 (0 when absent); nothing when it is another text.
std::optional<int64_t> whole_param(const httplib::Request& request, const char* name) {
  std::string text = request.get_param_value(name);
  if (text.empty()) return 0;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

BoardServer::BoardServer(std::string root, const std::string& chart_js)
    : root_(std::move(root)), chart_js_(read_chart_js(chart_js)) {
  run::find_runs(root_);  // a root that is no folder is a UsageError now, not on each request
  add_routes();
}

// Over two thousand finished runs the page's table every 2 s costs a few thousand stat() calls.
std::string BoardServer::runs_answer(const std::vector<run::RunFilter>& filters,
                                     const std::string& sort) {
  std::string query = sort;
  for (const run::RunFilter& filter : filters)
    query += "\n" + filter.key + " " + filter.op + " " + filter.value;
  std::vector<std::string> inside = runs_inside(root_);
  uint64_t generation = cache_.refresh(inside);
  {
    std::lock_guard<std::mutex> lock(answers_mutex_);
    auto found = answers_.find(query);
    if (found != answers_.end() && found->second.first == generation) return found->second.second;
  }
  std::string answer = dump_json(runs_table_payload(root_, cache_.runs(inside), filters, sort));
  std::lock_guard<std::mutex> lock(answers_mutex_);
  if (answers_.size() > 16) answers_.clear();  // queries typed one after another: keep a few
  answers_[query] = {generation, answer};
  return answer;
}

void BoardServer::serve() {
  std::thread warming([this] {
    try {
      runs_answer({}, "");             // the page's first question
    } catch (const std::exception&) {  // a request reads again, and answers with the problem
    }
  });
  listener_.serve();
  warming.join();
}

void BoardServer::add_routes() {
  httplib::Server& server = listener_.server();
  server.Get("/", [](const httplib::Request&, httplib::Response& response) {
    response.set_content(board_page(), "text/html; charset=utf-8");
  });
  server.Get("/chart.js", [this](const httplib::Request&, httplib::Response& response) {
    response.set_content(chart_js_, "text/javascript");
  });
  server.Get("/api/runs", [this](const httplib::Request& request, httplib::Response& response) {
    try {
      response.set_content(runs_answer(filters_of(request), request.get_param_value("sort")),
                           kJsonType);
    } catch (const UsageError& e) {
      refuse(response, 400, e.what());
    }
  });
  server.Get("/api/studies", [this](const httplib::Request&, httplib::Response& response) {
    send_json(response, studies_payload(root_));
  });
  server.Get("/api/metrics", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
    if (!run) return refuse(response, 404, "no such run under the board's root");
    std::optional<int64_t> from = whole_param(request, "from"),
                           points = whole_param(request, "points");
    if (!from) return refuse(response, 400, "from: expected a byte offset");
    if (!points) return refuse(response, 400, "points: expected a whole number of points");
    send_json(response, metric_rows(*run, *from, size_t(*points)));
  });
  server.Get("/api/details", [this](const httplib::Request& request, httplib::Response& response) {
    std::vector<std::string> runs;
    for (size_t i = 0; i < request.get_param_value_count("run"); ++i)
      runs.push_back(request.get_param_value("run", i));
    send_json(response, run_details(root_, runs));
  });
  server.Get("/api/histograms",
             [this](const httplib::Request& request, httplib::Response& response) {
               std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
               if (!run) return refuse(response, 404, "no such run under the board's root");
               send_json(response, run_histograms(*run));
             });
  server.Get("/api/images", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
    if (!run) return refuse(response, 404, "no such run under the board's root");
    send_json(response, run_images(*run));
  });
  server.Get("/api/text", [this](const httplib::Request& request, httplib::Response& response) {
    std::optional<std::string> run = run_under(root_, request.get_param_value("run"));
    if (!run) return refuse(response, 404, "no such run under the board's root");
    try {
      std::optional<std::string> text = run_text(*run, request.get_param_value("name"));
      if (!text) return refuse(response, 404, "no such file of the run");
      response.set_content(*text, "text/plain; charset=utf-8");
    } catch (const UsageError& e) {
      refuse(response, 400, e.what());
    }
  });
}

}  // namespace kiln::board
