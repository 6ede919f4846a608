// kiln tune CONFIG... [--set K=V]... [--space FILE] [--study NAME] [--parallel N] [--resume]
//           [--runs-root DIR]
// (docs/tuning.md): a study of trials, each an ordinary run under RUNS_ROOT/NAME/STUDY/.

#include <algorithm>
#include <ctime>

#include "apps/kiln/cli.h"
#include "kiln/core/console.h"
#include "kiln/core/error.h"
#include "kiln/core/usable_cpus.h"
#include "kiln/experiment/experiment_config.h"
#include "kiln/run/run_directory.h"
#include "kiln/tune/study_command.h"

namespace kiln::cli {
namespace {

struct TuneArgs {
  ConfigArgs config;
  std::string runs_root = "runs", study, space_file;
  int64_t parallel = 0;
  bool resume = false;
};

// What a study needs of a config, as `kiln train` reads it.
tune::ExperimentFacts experiment_facts(const RawConfig& raw) {
  experiment::ExperimentConfig config = experiment::parse_experiment(raw);
  return {tune::tune_section(config.sections), config.train.monitor,
          config.train.mode == Mode::kMax, config.seed};
}

int tune_study(const TuneArgs& args) {
  tune::StudyCommand command;
  // The space file stands in for tune.space before --set, which may still change it.
  command.config = load_config(args.config.files, {});
  if (!args.space_file.empty()) tune::use_space_file(command.config, args.space_file);
  for (const std::string& assignment : args.config.overrides)
    apply_override(command.config, assignment);
  command.overrides = args.config.overrides;
  command.runs_root = args.runs_root;
  command.study = args.study;
  command.resume = args.resume;
  command.space_given = !args.space_file.empty();
  command.parallel = args.parallel;
  command.program = this_program();
  command.cores = usable_cpus().count;
  command.read_experiment = experiment_facts;
  command.now = [] { return run::iso_time(std::time_t(system_seconds())); };
  return tune::run_study_command(command);
}

}  // namespace

void add_tune_command(CLI::App& app, Action& action) {
  auto* command =
      app.add_subcommand("tune", "Search hyper-parameters: trials of a config (docs/tuning.md)");
  auto args = std::make_shared<TuneArgs>();
  args->config.add_to(*command, /*files_required=*/false);
  command->add_option("--runs-root", args->runs_root, "Where run directories go")
      ->capture_default_str();
  command->add_option("--space", args->space_file,
                      "A YAML or JSON file of the search space (config path -> distribution), "
                      "in place of tune.space");
  command->add_option("--study", args->study,
                      "The study's name: its folder RUNS_ROOT/NAME/STUDY (default: a timestamp)");
  command->add_option("--parallel", args->parallel, "Trials at once (overrides tune.parallel)")
      ->check(CLI::Range(1, 256));
  command->add_flag("--resume", args->resume,
                    "Go on with the study --study names: its running trials from their "
                    "checkpoints, then new ones up to tune.trials");
  command->callback([&action, args, command] {
    if (!command->get_subcommands().empty()) return;
    action = [args] {
      if (args->config.files.empty())
        throw UsageError(
            "kiln tune needs a config file with a tune: section (or: tune show STUDY)");
      return tune_study(*args);
    };
  });
  add_tune_tools(*command, action);
}

}  // namespace kiln::cli
