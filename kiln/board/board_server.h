#pragma once
// `kiln board`: a web page over a runs tree, served by kiln itself (cpp-httplib) with no Python
// and no outside requests: the page (board_page.h), Chart.js from Debian's libjs-chart.js, and the
// JSON of board_api.h. Only files of the runs under the root are ever read.
// Thread-safety: serve() blocks its thread; stop() may be called from any other.

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
}

namespace kiln::board {

/// Where Debian's libjs-chart.js puts Chart.js.
constexpr const char* kChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

class BoardServer {
 public:
  /// Serves `root`; Chart.js is read from `chart_js` (a missing file is a UsageError naming the
  /// package).
  BoardServer(std::string root, const std::string& chart_js = kChartJsPath);
  ~BoardServer();

  /// Binds `host`:`port` (0: any free port) and returns the port; throws UsageError when it
  /// cannot.
  int bind(const std::string& host, int port);
  /// Answers requests until stop(); returns at once when stop() came first.
  void serve();
  /// Ends serve() and returns once it has ended (or at once when serve() has not begun).
  void stop();

 private:
  void add_routes();

  std::string root_, chart_js_;
  std::unique_ptr<httplib::Server> server_;
  std::mutex mutex_;
  std::condition_variable ended_;
  enum class Phase { kIdle, kServing, kEnded } phase_ = Phase::kIdle;
  bool stop_asked_ = false;
};

}  // namespace kiln::board
