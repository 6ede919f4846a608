#pragma once
// `kiln board`: a web page over a runs tree, served by kiln itself with no Python and no outside
// requests: the page (board_page.h), Chart.js from Debian's libjs-chart.js, and the JSON of
// board_api.h. Only files of the runs under the root are ever read.
// It runs on the event loop `kiln serve` runs on (net/http_event_loop.h), with its bounds:
// connections capped, a client that sends nothing dropped after the read timeout, a request
// that trickles in answered 408 after the request timeout. Each request is answered by a worker
// beside the loop (serving/off_loop_workers.h), at most kMaxWaitingRequests waiting (then 503):
// with a thread per connection, eight clients sending their headers slowly held every thread.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/board/query_params.h"
#include "kiln/board/run_cache.h"
#include "kiln/board/run_links.h"
#include "kiln/net/http_event_loop.h"
#include "kiln/run/metrics_csv.h"
#include "kiln/run/run_query.h"
#include "kiln/serving/off_loop_workers.h"

namespace kiln::board {

/// Where Debian's libjs-chart.js puts Chart.js.
constexpr const char* kChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

struct BoardOptions {
  int read_timeout_seconds = 10;     // a client that sends nothing for this long is dropped
  int request_timeout_seconds = 30;  // a request arrives whole within this
  int max_connections = 1024;        // open at once
  int workers = 4;                   // requests answered at once
};

class BoardServer {
 public:
  /// Requests waiting for a worker at most; more are answered 503.
  static constexpr size_t kMaxWaitingRequests = 256;

  /// Serves `root`; Chart.js is read from `chart_js` (a missing file is a UsageError naming the
  /// package).
  BoardServer(std::string root, const std::string& chart_js = kChartJsPath,
              BoardOptions options = {});

  /// Binds `host`:`port` (0: any free port) and returns the port; throws UsageError when it
  /// cannot.
  int bind(const std::string& host, int port) { return loop_.bind(host, port); }
  /// Answers requests until stop(); returns at once when stop() came first. The runs table is
  /// made meanwhile, so that the page's first one comes from the cache.
  void serve();
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun); the
  /// requests still waiting for a worker are dropped (their connections close with the loop).
  void stop() {
    loop_.stop();
    workers_.drop_waiting();
  }

 private:
  /// On the loop's thread: hands the request to a worker.
  void route(net::HttpRequest& request, const net::HttpRespond& respond);
  /// On a worker: the answer to a GET of `path`.
  net::HttpAnswer answer(const std::string& path, const QueryParams& params);
  net::HttpAnswer answer_run_file(const std::string& path, const QueryParams& params);

  /// The runs table for a request's filters and sort, made again only when a run changed.
  std::string runs_answer(const std::vector<run::RunFilter>& filters, const std::string& sort);
  /// A run's metrics from byte `from`, thinned to `points`, read again only when its
  /// metrics.csv changed: twelve clients asking for a 95 MB file over and over held every worker
  /// (the runs table waited over 30 s).
  net::HttpAnswer metrics_answer(const std::string& run, int64_t from, size_t points);

  std::string root_, chart_js_;
  RunCache cache_;
  RunLinks links_;  // what runs_inside keeps between requests
  std::mutex answers_mutex_;
  std::map<std::string, std::pair<uint64_t, std::string>> answers_;  // by query: generation, JSON
  // Metrics answers by run, from and points: the file's inode, size and change time, the JSON.
  struct MetricsAnswer {
    run::FileVersion file;
    std::string json;
  };
  std::map<std::string, MetricsAnswer> metrics_answers_;
  net::HttpEventLoop loop_;
  // After the loop: ended first, answering what waits while the loop can still send it.
  serving::OffLoopWorkers workers_;
};

}  // namespace kiln::board
