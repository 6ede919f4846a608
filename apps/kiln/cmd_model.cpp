// kiln model summary CONFIG... [--set K=V]... [--input-shape C,H,W] [--depth N]

#include <cstdio>
#include <optional>

#include "apps/kiln/cli.h"
#include "kiln/engine/model_summary.h"

namespace kiln::cli {
namespace {

struct SummaryArgs {
  ConfigArgs config;
  std::string input_shape;
  int depth = -1;
};

}  // namespace

void add_model_command(CLI::App& app, Action& action) {
  auto* model = app.add_subcommand("model", "Inspect models");
  model->require_subcommand(1);
  auto* summary = model->add_subcommand(
      "summary", "One row per module: type, output shape, parameters; totals and MACs");
  auto args = std::make_shared<SummaryArgs>();
  args->config.add_to(*summary);
  summary->add_option("--input-shape", args->input_shape,
                      "Shape of one example, e.g. 1,28,28; then only the model section is read "
                      "(default: the training data's shape)");
  summary->add_option("--depth", args->depth, "Show modules nested at most this deep")
      ->check(CLI::NonNegativeNumber);
  summary->callback([&action, args] {
    action = [args] {
      std::optional<std::vector<int64_t>> shape;
      if (!args->input_shape.empty())
        shape = engine::parse_shape(args->input_shape, "--input-shape");
      RawConfig raw = load_config(args->config.files, args->config.overrides);
      std::fputs(engine::model_summary_text(raw, shape, args->depth).c_str(), stdout);
      return 0;
    };
  });
}

}  // namespace kiln::cli
