#pragma once
// `kiln board`: a web page over a runs tree, served by kiln itself (cpp-httplib) with no Python
// and no outside requests: the page (board_page.h), Chart.js from Debian's libjs-chart.js, and the
// JSON of board_api.h. Only files of the runs under the root are ever read.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kiln/board/http_listener.h"
#include "kiln/board/run_cache.h"
#include "kiln/run/run_query.h"

namespace kiln::board {

/// Where Debian's libjs-chart.js puts Chart.js.
constexpr const char* kChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

class BoardServer {
 public:
  /// Serves `root`; Chart.js is read from `chart_js` (a missing file is a UsageError naming the
  /// package).
  BoardServer(std::string root, const std::string& chart_js = kChartJsPath);

  /// Binds `host`:`port` (0: any free port) and returns the port; throws UsageError when it
  /// cannot.
  int bind(const std::string& host, int port) { return listener_.bind(host, port); }
  /// Answers requests until stop(); returns at once when stop() came first. The runs table is
  /// made meanwhile, so that the page's first one comes from the cache.
  void serve();
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun).
  void stop() { listener_.stop(); }

 private:
  void add_routes();

  /// The runs table for a request's filters and sort, made again only when a run changed.
  std::string runs_answer(const std::vector<run::RunFilter>& filters, const std::string& sort);

  std::string root_, chart_js_;
  RunCache cache_;
  std::mutex answers_mutex_;
  std::map<std::string, std::pair<uint64_t, std::string>> answers_;  // by query: generation, JSON
  HttpListener listener_;
};

}  // namespace kiln::board
