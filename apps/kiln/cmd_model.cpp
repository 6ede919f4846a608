// kiln model summary CONFIG... [--set K=V]... [--input-shape C,H,W] [--depth N]
// kiln model summary (RUN_DIR|CHECKPOINT_DIR) [--depth N]

#include <cstdio>
#include <filesystem>
#include <optional>

#include "apps/kiln/cli.h"
#include "kiln/bench/model_summary.h"
#include "kiln/core/error.h"

namespace kiln::cli {
namespace {

struct SummaryArgs {
  ConfigArgs config;
  std::string input_shape;
  int depth = -1;
};

int print_summary(const SummaryArgs& args) {
  const std::vector<std::string>& files = args.config.files;
  if (files.size() == 1 && std::filesystem::is_directory(files[0])) {
    if (!args.input_shape.empty() || !args.config.overrides.empty())
      throw UsageError(
          "a run's model is summarised for the inputs it was trained on: drop "
          "--input-shape and --set");
    std::fputs(bench::run_model_summary_text(files[0], args.depth).c_str(), stdout);
    return 0;
  }
  std::optional<std::vector<int64_t>> shape;
  if (!args.input_shape.empty()) shape = bench::parse_shape(args.input_shape, "--input-shape");
  RawConfig raw = load_config(files, args.config.overrides);
  std::fputs(bench::model_summary_text(raw, shape, args.depth).c_str(), stdout);
  return 0;
}

}  // namespace

void add_model_command(CLI::App& app, Action& action) {
  auto* model = app.add_subcommand("model", "Inspect models");
  model->require_subcommand(1);
  auto* summary = model->add_subcommand(
      "summary", "One row per module: type, output shape, parameters; totals and MACs");
  auto args = std::make_shared<SummaryArgs>();
  args->config.add_to(*summary, /*files_required=*/true, /*runs_too=*/true);
  summary->add_option("--input-shape", args->input_shape,
                      "Shape of one example, e.g. 1,28,28; then only the model section is read "
                      "(default: the training data's shape)");
  summary->add_option("--depth", args->depth, "Show modules nested at most this deep")
      ->check(CLI::NonNegativeNumber);
  summary->callback([&action, args] { action = [args] { return print_summary(*args); }; });
}

}  // namespace kiln::cli
