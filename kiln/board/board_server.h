#pragma once
// `kiln board`: a web page over a runs tree, served by kiln itself (cpp-httplib) with no Python
// and no outside requests: the page (board_page.h), Chart.js from Debian's libjs-chart.js, and the
// JSON of board_api.h. Only files of the runs under the root are ever read.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <string>

#include "kiln/board/http_listener.h"

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
  /// Answers requests until stop(); returns at once when stop() came first.
  void serve() { listener_.serve(); }
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun).
  void stop() { listener_.stop(); }

 private:
  void add_routes();

  std::string root_, chart_js_;
  HttpListener listener_;
};

}  // namespace kiln::board
