// kiln train CONFIG... [--set K=V]... [--runs-root DIR] [--name NAME] [--run-dir DIR]
//            [--resume [RUN_DIR]] [--note TEXT] [--dry-run] [--quiet]

#include <cstdio>
#include <cstdlib>

#include "apps/kiln/cli.h"
#include "apps/kiln/training_signals.h"
#include "kiln/distributed/rendezvous.h"
#include "kiln/experiment/resume.h"
#include "kiln/experiment/training_run.h"
#include "kiln/experiment/trial_reporter.h"
#include "kiln/run/run_info.h"

namespace kiln::cli {
namespace {

struct TrainArgs {
  ConfigArgs config;
  std::string runs_root = "runs", name, note, resume, run_dir;
  bool dry_run = false, resume_given = false, quiet = false;
};

// The request for `--resume [RUN_DIR]`: the run given, or the newest unfinished one of the
// config's name; its saved config with the resumable --set overrides.
experiment::TrainRequest resume_request(const TrainArgs& args) {
  experiment::TrainRequest request;
  request.resume_dir = args.resume;
  if (!request.resume_dir.empty()) {
    if (!args.config.files.empty())
      throw UsageError(
          "--resume RUN_DIR continues with the run's own config; drop the config "
          "files (resumable keys can still be changed with --set)");
    request.config = experiment::resume_config(request.resume_dir, args.config.overrides);
    return request;
  }
  if (args.config.files.empty())
    throw UsageError("--resume without a run directory needs the config, to find its runs");
  RawConfig config = load_config(args.config.files, args.config.overrides);
  if (!args.name.empty()) apply_override(config, "name=\"" + args.name + "\"");
  request.resume_dir =
      run::newest_unfinished_run(args.runs_root, config.tree.value("name", "experiment"));
  // The files given may have been edited since the run began: only resumable keys may differ.
  std::string files;
  for (const auto& file : args.config.files) files += (files.empty() ? "" : " ") + file;
  if (!args.config.overrides.empty()) files += " with this command's --set";
  request.config = experiment::resumable_config(request.resume_dir, std::move(config), files);
  return request;
}

// The folder a new run trains into when the command or a launcher names it: --run-dir, else
// KILN_RUN_DIR, so that every process of a job writes (rank 0) or reads the same one.
std::string given_run_dir(const TrainArgs& args) {
  if (!args.run_dir.empty() && args.resume_given)
    throw UsageError("--run-dir names a new run's folder; to continue a run use --resume RUN_DIR");
  if (!args.run_dir.empty() || args.resume_given) return args.run_dir;
  const char* from_launcher = std::getenv("KILN_RUN_DIR");
  return from_launcher ? from_launcher : "";
}

int train(const TrainArgs& args) {
  experiment::TrainRequest request;
  if (args.resume_given) {
    request = resume_request(args);
  } else {
    if (args.config.files.empty()) throw UsageError("train needs a config file (or --resume)");
    request.config = load_config(args.config.files, args.config.overrides);
    if (!args.name.empty()) apply_override(request.config, "name=\"" + args.name + "\"");
  }
  request.runs_root = args.runs_root;
  request.run_dir = given_run_dir(args);
  request.note = args.note;
  request.dry_run = args.dry_run;
  request.quiet = args.quiet;
  request.command_line = invocation();
  // A launcher's job (kiln launch, torchrun, Slurm, TF_CONFIG): this process is one of its ranks.
  request.job = distributed::rendezvous_from(distributed::process_environment());
  request.trial = experiment::TrialReporter::from_environment();
  TrainingSignals signals;
  request.stop_signal = signals.received();
  return experiment::run_training(request, stdout, system_seconds).exit_code;
}

}  // namespace

void add_train_command(CLI::App& app, Action& action) {
  auto* train_command = app.add_subcommand("train", "Train a model from config files");
  auto args = std::make_shared<TrainArgs>();
  args->config.add_to(*train_command, /*files_required=*/false);
  train_command->add_option("--runs-root", args->runs_root, "Where run directories go")
      ->capture_default_str();
  train_command->add_option("--name", args->name, "Experiment name (overrides the config's name)");
  train_command->add_option("--run-dir", args->run_dir,
                            "Train into this folder (made when missing) instead of "
                            "RUNS_ROOT/NAME/TIMESTAMP; a launcher may set KILN_RUN_DIR instead");
  train_command->add_option("--note", args->note,
                            "Hypothesis or remark, saved as notes.md in the run");
  train_command->add_flag("--quiet", args->quiet,
                          "Print only the run: line and errors (train.log still gets every line)");
  train_command->add_flag("--dry-run", args->dry_run,
                          "Check the config and build the model, then stop");
  train_command
      ->add_option("--resume", args->resume,
                   "Continue a run from its last checkpoint: RUN_DIR, or without one the newest "
                   "unfinished run of the config's name")
      ->expected(0, 1)
      ->type_name("[RUN_DIR]");
  train_command->callback([&action, args, train_command] {
    args->resume_given = train_command->count("--resume") > 0;
    action = [args] { return train(*args); };
  });
}

}  // namespace kiln::cli
