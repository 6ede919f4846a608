// kiln board [ROOT] [--port P] [--host H]

#include <algorithm>
#include <cstdio>
#include <thread>

#include "apps/kiln/cli.h"
#include "apps/kiln/stop_signals.h"
#include "kiln/board/board_server.h"
#include "kiln/core/usable_cpus.h"

namespace kiln::cli {
namespace {

struct BoardArgs {
  std::string root = "runs", host = "127.0.0.1";
  int port = 6006;
};

// Serves on another thread while this one waits for SIGINT or SIGTERM, then stops the server:
// the signals are blocked in the server's thread (stop_signals.h).
int run_board(const BoardArgs& args) {
  board::BoardOptions options;
  // A request reads files and writes JSON: a few at once even on one CPU, more where there are.
  options.workers = std::max(4, usable_cpus().count);
  board::BoardServer server(args.root, board::kChartJsPath, options);
  int port = server.bind(args.host, args.port);
  StopSignals stops;
  std::thread serving([&server] { server.serve(); });
  std::printf("kiln board: http://%s:%d/ over %s (Ctrl-C stops)\n", args.host.c_str(), port,
              args.root.c_str());
  std::fflush(stdout);
  stops.wait();
  server.stop();
  serving.join();
  return 0;
}

}  // namespace

void add_board_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand("board", "A live web page over a runs tree (no Python)");
  auto args = std::make_shared<BoardArgs>();
  command->add_option("root", args->root, "A folder of runs, searched at any depth")
      ->capture_default_str();
  command->add_option("--port", args->port, "Port; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command
      ->add_option("--host", args->host,
                   "Address to listen on; 0.0.0.0 serves other machines too (anyone who can "
                   "reach it reads the runs)")
      ->capture_default_str();
  command->callback([&action, args] { action = [args] { return run_board(*args); }; });
}

}  // namespace kiln::cli
