// kiln train CONFIG... [--set K=V]... [--runs-root DIR] [--name NAME] [--note TEXT] [--dry-run]

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/engine/training_run.h"

namespace kiln::cli {
namespace {

struct TrainArgs {
  ConfigArgs config;
  std::string runs_root = "runs", name, note;
  bool dry_run = false;
};

}  // namespace

void add_train_command(CLI::App& app, Action& action) {
  auto* train = app.add_subcommand("train", "Train a model from config files");
  auto args = std::make_shared<TrainArgs>();
  args->config.add_to(*train);
  train->add_option("--runs-root", args->runs_root, "Where run directories go")
      ->capture_default_str();
  train->add_option("--name", args->name, "Experiment name (overrides the config's name)");
  train->add_option("--note", args->note, "Hypothesis or remark, saved as notes.md in the run");
  train->add_flag("--dry-run", args->dry_run, "Check the config and build the model, then stop");
  train->callback([&action, args] {
    action = [args] {
      engine::TrainRequest request;
      request.config = load_config(args->config.files, args->config.overrides);
      if (!args->name.empty()) apply_override(request.config, "name=\"" + args->name + "\"");
      request.runs_root = args->runs_root;
      request.note = args->note;
      request.dry_run = args->dry_run;
      request.command_line = invocation();
      engine::run_training(request, stdout, engine::system_seconds);
      return 0;
    };
  });
}

}  // namespace kiln::cli
