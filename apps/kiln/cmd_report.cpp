// kiln report [ROOT] -o report.html

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/board/board_server.h"
#include "kiln/board/report.h"
#include "kiln/core/text_file.h"

namespace kiln::cli {
namespace {

struct ReportArgs {
  std::string root = "runs", out = "report.html";
};

int run_report(const ReportArgs& args) {
  std::string html = board::report_html(args.root, board::read_chart_js(board::kChartJsPath));
  write_file_atomic(args.out, html);
  std::printf("wrote %s (%zu bytes): open it in a browser; it needs nothing else\n",
              args.out.c_str(), html.size());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "report", "The board's page over a runs tree as one self-contained HTML file");
  auto args = std::make_shared<ReportArgs>();
  command->add_option("root", args->root, "A folder of runs, searched at any depth")
      ->capture_default_str();
  command->add_option("-o,--output", args->out, "The HTML file to write")->capture_default_str();
  command->callback([&action, args] { action = [args] { return run_report(*args); }; });
}

}  // namespace kiln::cli
