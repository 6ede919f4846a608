#pragma once
// The `kiln` command line. run_cli() (kiln/run_cli.h) is the whole program: main() only calls
// it, and a user's own executable that links kiln (with its own registered components) can too.
// Each subcommand lives in its own cmd_<name>.cpp and adds itself to the app.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

#include "kiln/run_cli.h"

namespace kiln {
namespace cli {

/// What a parsed subcommand runs; returns the exit code.
using Action = std::function<int()>;

/// The command line this process was started with, for run.json.
const std::string& invocation();

/// The kiln binary running now (the processes it starts run the same one).
std::string this_program();

/// Config files and `--set` overrides, as several commands take them.
struct ConfigArgs {
  std::vector<std::string> files;
  std::vector<std::string> overrides;
  /// `runs_too`: a run or checkpoint directory may stand in for the config files.
  void add_to(CLI::App& command, bool files_required = true, bool runs_too = false);
};

void add_train_command(CLI::App& app, Action& action);
void add_launch_command(CLI::App& app, Action& action);
void add_tune_command(CLI::App& app, Action& action);
/// `tune show` and `tune benchmark`.
void add_tune_tools(CLI::App& tune, Action& action);
void add_eval_command(CLI::App& app, Action& action);
void add_export_command(CLI::App& app, Action& action);
void add_serve_command(CLI::App& app, Action& action);
void add_predict_command(CLI::App& app, Action& action);
void add_list_command(CLI::App& app, Action& action);
void add_config_command(CLI::App& app, Action& action);
void add_data_command(CLI::App& app, Action& action);
void add_model_command(CLI::App& app, Action& action);
void add_runs_command(CLI::App& app, Action& action);
void add_board_command(CLI::App& app, Action& action);
void add_report_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);
void add_data_convert_command(CLI::App& data, Action& action);
void add_data_bench_command(CLI::App& data, Action& action);
void add_data_stats_command(CLI::App& data, Action& action);

}  // namespace cli
}  // namespace kiln
