// kiln tune CONFIG... [--set K=V]... [--space FILE] [--study NAME] [--parallel N] [--resume]
//           [--runs-root DIR]
// (docs/tuning.md): a study of trials, each an ordinary run under RUNS_ROOT/NAME/STUDY/.

#include <ctime>
#include <filesystem>
#include <thread>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/core/folder_lock.h"
#include "kiln/engine/console.h"
#include "kiln/engine/experiment_config.h"
#include "kiln/run/run_directory.h"
#include "kiln/tune/study_runner.h"

namespace kiln::cli {
namespace {
namespace fs = std::filesystem;

struct TuneArgs {
  ConfigArgs config;
  std::string runs_root = "runs", study, space_file;
  int64_t parallel = 0;
  bool resume = false;
};

std::string now_text() { return run::iso_time(std::time_t(engine::system_seconds())); }

// `study-20261126-231500`, in local time as run folders are named.
std::string default_study_name() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "study-%Y%m%d-%H%M%S", &local);
  return stamp;
}

// --space FILE: the search space, in place of the config's tune.space; a config without a
// tune: section gets one with its defaults.
void use_space_file(RawConfig& raw, const std::string& file) {
  Json space = load_config_file(file);
  if (!space.is_object() || space.empty())
    throw ConfigError("tune.space", file,
                      "the --space file must map config paths to distributions, e.g. "
                      "{optimizer.lr: {type: loguniform, low: 1.0e-4, high: 0.1}}");
  Json& tune = raw.tree["tune"];
  if (!tune.is_null() && !tune.is_object())
    throw ConfigError("tune", raw.origins.find("tune"),
                      "must be a mapping (metric, trials, sampler, space, ...) to take --space");
  tune["space"] = space;
  raw.origins.record("tune.space", space, file);
}

// The study's setup from its config (the files given, or the one a resumed study saved).
tune::StudySetup setup_from(const RawConfig& raw, const TuneArgs& args) {
  engine::ExperimentConfig config = engine::parse_experiment(raw);
  if (!config.tune)
    throw UsageError("the config has no tune: section; docs/tuning.md shows how to write one");
  tune::StudySetup setup;
  setup.options = *config.tune;
  if (setup.options.space.parameters().empty())
    throw ConfigError("tune.space", "",
                      "has no parameters: give config paths and their distributions, e.g. "
                      "{optimizer.lr: {type: loguniform, low: 1.0e-4, high: 0.1}}");
  if (setup.options.metric.empty()) setup.options.metric = config.train.monitor;
  setup.options.mode = setup.options.mode == ModeOrAuto::kAuto
                           ? (config.train.mode == Mode::kMax ? ModeOrAuto::kMax : ModeOrAuto::kMin)
                           : setup.options.mode;
  if (args.parallel > 0) setup.options.parallel = args.parallel;
  setup.seed = uint64_t(setup.options.seed.value_or(config.seed));
  setup.base_config = raw.tree;
  setup.base_config.erase("tune");
  setup.program = this_program();
  setup.cores = std::max(1u, std::thread::hardware_concurrency());
  setup.check_config = [](const RawConfig& trial) { engine::parse_experiment(trial); };
  setup.now = now_text;
  return setup;
}

int tune_study(const TuneArgs& args) {
  // The space file stands in for tune.space before --set, which may still change it.
  RawConfig raw = load_config(args.config.files, {});
  if (!args.space_file.empty()) use_space_file(raw, args.space_file);
  for (const std::string& assignment : args.config.overrides) apply_override(raw, assignment);
  std::string name = raw.tree.value("name", "experiment");
  std::string study_name = args.study.empty() ? default_study_name() : args.study;
  fs::path study_dir = fs::path(args.runs_root) / name / study_name;
  std::string database = (study_dir / "study.db").string();
  if (args.resume) {
    if (args.study.empty())
      throw UsageError("--resume needs --study NAME: the study to go on with");
    if (!args.space_file.empty())
      throw UsageError("--resume goes on with the study's own space; --space starts a new study");
    FolderLock lock(study_dir.string(), "study " + study_dir.string() + " is being run");
    tune::Study study = tune::Study::open(database);
    RawConfig saved;
    saved.tree = study.info().config;
    for (const std::string& assignment : args.config.overrides) {
      bool budget = false;
      for (const char* key : {"tune.trials=", "tune.time=", "tune.parallel="})
        budget = budget || assignment.rfind(key, 0) == 0;
      if (!budget)
        throw UsageError(
            "--resume goes on with the study's own config; only tune.trials, "
            "tune.time and tune.parallel may change (got --set " +
            assignment + ")");
      apply_override(saved, assignment);
    }
    tune::StudySetup setup = setup_from(saved, args);
    setup.study_dir = study_dir.string();
    std::printf("study: %s\n", setup.study_dir.c_str());
    return tune::run_study(study, setup);
  }
  tune::StudySetup setup = setup_from(raw, args);
  setup.study_dir = study_dir.string();
  tune::check_space(setup);
  fs::create_directories(study_dir);
  FolderLock lock(study_dir.string(), "study " + study_dir.string() + " is being run");
  Json saved = raw.tree;
  saved["tune"]["metric"] = setup.options.metric;
  saved["tune"]["mode"] = setup.options.mode == ModeOrAuto::kMax ? "max" : "min";
  tune::Study study = tune::Study::create(
      database,
      {study_name, setup.options.metric, setup.options.mode == ModeOrAuto::kMax, saved, now_text()},
      setup.options.space);
  std::printf("study: %s\n", setup.study_dir.c_str());
  return tune::run_study(study, setup);
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
