#include "kiln/board/board_server.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <optional>
#include <thread>

#include "kiln/board/board_api.h"
#include "kiln/board/board_page.h"
#include "kiln/board/board_studies.h"
#include "kiln/board/report.h"
#include "kiln/core/error.h"
#include "kiln/core/json_text.h"

namespace kiln::board {
namespace {

constexpr const char* kJsonType = "application/json; charset=utf-8";

net::HttpAnswer json_answer(const Json& body) { return {200, kJsonType, dump_json(body), nullptr}; }

net::HttpAnswer refusal(int status, const std::string& why) {
  return {status, kJsonType, dump_json(Json{{"error", why}}), nullptr};
}

std::vector<run::RunFilter> filters_of(const QueryParams& params) {
  std::vector<run::RunFilter> filters;
  for (const std::string& filter : params.all("filter"))
    filters.push_back(run::RunFilter::parse(filter));
  return filters;
}

// A parameter that is a whole number >= 0 (0 when absent); nothing when it is another text.
std::optional<int64_t> whole_param(const QueryParams& params, const char* name) {
  std::string text = params.get(name);
  if (text.empty()) return 0;
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

net::HttpLoopOptions loop_options(const BoardOptions& options) {
  net::HttpLoopOptions loop;
  loop.limits.max_body_bytes = 64 << 10;  // the board is asked with GETs, which carry none
  loop.read_timeout_seconds = options.read_timeout_seconds;
  loop.request_timeout_seconds = options.request_timeout_seconds;
  loop.max_connections = options.max_connections;
  loop.max_pending_bytes = 64 << 20;
  return loop;
}

}  // namespace

BoardServer::BoardServer(std::string root, const std::string& chart_js, BoardOptions options)
    : root_(std::move(root)),
      chart_js_(read_chart_js(chart_js)),
      loop_(
          [this](net::HttpRequest& request, net::HttpRespond respond) { route(request, respond); },
          loop_options(options)),
      workers_(options.workers, kMaxWaitingRequests) {
  run::find_runs(root_);  // a root that is no folder is a UsageError now, not on each request
}

// Over two thousand finished runs the page's table every 2 s costs a few thousand stat() calls.
std::string BoardServer::runs_answer(const std::vector<run::RunFilter>& filters,
                                     const std::string& sort) {
  std::string query = sort;
  for (const run::RunFilter& filter : filters)
    query += "\n" + filter.key + " " + filter.op + " " + filter.value;
  std::vector<std::string> inside = runs_inside(root_, &links_);
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
  loop_.serve();
  warming.join();
}

void BoardServer::route(net::HttpRequest& request, const net::HttpRespond& respond) {
  if (request.method != "GET")
    return respond(refusal(405, fmt::format("the board answers GET, not {}", request.method)));
  auto work = [this, path = std::move(request.path), query = std::move(request.query), respond] {
    try {
      respond(answer(path, QueryParams::parse(query)));
    } catch (const UsageError& e) {
      respond(refusal(400, e.what()));
    } catch (const std::exception& e) {
      respond(refusal(500, e.what()));
    }
  };
  if (!workers_.post(1, std::move(work)))
    respond(refusal(503, fmt::format("the board has {} requests waiting already; try again",
                                     kMaxWaitingRequests)));
}

net::HttpAnswer BoardServer::answer(const std::string& path, const QueryParams& params) {
  if (path == "/") return {200, "text/html; charset=utf-8", board_page(), nullptr};
  if (path == "/chart.js") return {200, "text/javascript", chart_js_, nullptr};
  if (path == "/api/runs")
    return {200, kJsonType, runs_answer(filters_of(params), params.get("sort")), nullptr};
  if (path == "/api/studies") return json_answer(studies_payload(root_));
  if (path == "/api/details") return json_answer(run_details(root_, params.all("run")));
  for (const char* per_run : {"/api/metrics", "/api/histograms", "/api/images", "/api/text"})
    if (path == per_run) return answer_run_file(path, params);
  return refusal(404, fmt::format("no such page of the board: {}", path));
}

// The answers about one run of the root's, named by the parameter `run`.
net::HttpAnswer BoardServer::answer_run_file(const std::string& path, const QueryParams& params) {
  std::optional<std::string> run = run_under(root_, params.get("run"));
  if (!run) return refusal(404, "no such run under the board's root");
  if (path == "/api/histograms") return json_answer(run_histograms(*run));
  if (path == "/api/images") return json_answer(run_images(*run));
  if (path == "/api/text") {
    std::optional<std::string> text = run_text(*run, params.get("name"));
    if (!text) return refusal(404, "no such file of the run");
    return {200, "text/plain; charset=utf-8", *text, nullptr};
  }
  std::optional<int64_t> from = whole_param(params, "from"), points = whole_param(params, "points");
  if (!from) return refusal(400, "from: expected a byte offset");
  if (!points) return refusal(400, "points: expected a whole number of points");
  return metrics_answer(*run, *from, size_t(*points));
}

net::HttpAnswer BoardServer::metrics_answer(const std::string& run, int64_t from, size_t points) {
  std::optional<run::FileVersion> version = run::metrics_version(run);
  std::string key = fmt::format("{}\n{}\n{}", run, from, points);
  if (version) {
    std::lock_guard<std::mutex> lock(answers_mutex_);
    auto found = metrics_answers_.find(key);
    if (found != metrics_answers_.end() && found->second.file == *version)
      return {200, kJsonType, found->second.json, nullptr};
  }
  std::string json = dump_json(metric_rows(run, from, points));
  // Kept only when the file did not change while it was read.
  if (version && run::metrics_version(run) == version) {
    std::lock_guard<std::mutex> lock(answers_mutex_);
    if (metrics_answers_.size() >= 16) metrics_answers_.clear();
    metrics_answers_[key] = {*version, json};
  }
  return {200, kJsonType, std::move(json), nullptr};
}

}  // namespace kiln::board
