#include "kiln/tune/study_command.h"

#include <algorithm>
#include <ctime>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/folder_lock.h"
#include "kiln/tune/command_line.h"
#include "kiln/tune/study.h"
#include "kiln/tune/study_runner.h"

namespace kiln::tune {
namespace {

namespace fs = std::filesystem;

// `study-20261126-231500`, in local time as run folders are named.
std::string default_study_name() {
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "study-%Y%m%d-%H%M%S", &local);
  return stamp;
}

// The study's setup from its config (the one given, or the one a resumed study saved).
StudySetup setup_from(const RawConfig& raw, const StudyCommand& command) {
  ExperimentFacts facts =
      runs_a_program(raw) ? program_study_facts(raw) : command.read_experiment(raw);
  if (!facts.tune)
    throw UsageError("the config has no tune: section; docs/tuning.md shows how to write one");
  StudySetup setup;
  setup.options = *facts.tune;
  if (setup.options.space.parameters().empty())
    throw ConfigError("tune.space", "",
                      "has no parameters: give config paths and their distributions, e.g. "
                      "{optimizer.lr: {type: loguniform, low: 1.0e-4, high: 0.1}}");
  if (setup.options.metric.empty()) setup.options.metric = facts.monitor;
  if (setup.options.mode == ModeOrAuto::kAuto)
    setup.options.mode = facts.maximize ? ModeOrAuto::kMax : ModeOrAuto::kMin;
  if (command.parallel > 0) setup.options.parallel = command.parallel;
  setup.seed = uint64_t(setup.options.seed.value_or(facts.seed));
  setup.base_config = raw.tree;
  setup.base_config.erase("tune");
  setup.program = command.program;
  setup.cores = command.cores;
  setup.check_config = [read = command.read_experiment](const RawConfig& trial) { read(trial); };
  if (!setup.options.command.empty()) {
    check_command_line(setup.options.command, setup.options.space);
    setup.check_config = [](const RawConfig&) {};  // the program reads its own settings
  }
  setup.now = command.now;
  return setup;
}

// A resumed study's own config with the budget's --set applied; UsageError for any other change.
RawConfig resumed_config(const Study& study, const StudyCommand& command) {
  RawConfig saved;
  saved.tree = study.info().config;
  for (const std::string& assignment : command.overrides) {
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
  return saved;
}

int resume_study(const StudyCommand& command, const fs::path& study_dir) {
  if (command.study.empty())
    throw UsageError("--resume needs --study NAME: the study to go on with");
  if (command.space_given)
    throw UsageError("--resume goes on with the study's own space; --space starts a new study");
  FolderLock lock(study_dir.string(), "study " + study_dir.string() + " is being run");
  Study study = Study::open((study_dir / "study.db").string());
  StudySetup setup = setup_from(resumed_config(study, command), command);
  setup.study_dir = study_dir.string();
  std::fprintf(setup.out, "study: %s\n", setup.study_dir.c_str());
  return run_study(study, setup);
}

int start_study(const StudyCommand& command, const fs::path& study_dir,
                const std::string& study_name) {
  StudySetup setup = setup_from(command.config, command);
  setup.study_dir = study_dir.string();
  check_space(setup);
  fs::create_directories(study_dir);
  FolderLock lock(study_dir.string(), "study " + study_dir.string() + " is being run");
  bool maximize = setup.options.mode == ModeOrAuto::kMax;
  // Saved with the metric and mode it optimizes, which a resume holds it to.
  Json saved = command.config.tree;
  saved["tune"]["metric"] = setup.options.metric;
  saved["tune"]["mode"] = maximize ? "max" : "min";
  Study study = Study::create((study_dir / "study.db").string(),
                              {study_name, setup.options.metric, maximize, saved, command.now()},
                              setup.options.space);
  std::fprintf(setup.out, "study: %s\n", setup.study_dir.c_str());
  return run_study(study, setup);
}

}  // namespace

bool runs_a_program(const RawConfig& config) {
  const Json& tune = config.tree.value("tune", Json());
  return tune.is_object() && tune.contains("command") && !tune["command"].is_null() &&
         !(tune["command"].is_array() && tune["command"].empty());
}

ExperimentFacts program_study_facts(const RawConfig& config) {
  for (const auto& [key, value] : config.tree.items())
    if (key != "version" && key != "name" && key != "seed" && key != "tune")
      throw ConfigError(key, config.origins.find(key),
                        "a study of a program (tune.command) runs no kiln train: its config "
                        "holds only version, name, seed and tune; the program reads its own "
                        "settings");
  if (!config.tree["tune"]["command"].is_array())
    throw ConfigError("tune.command", config.origins.find("tune.command"),
                      "is a list, the program and its arguments, e.g. [python3, train.py, --lr, "
                      "\"{lr}\"], not " +
                          show_value(config.tree["tune"]["command"]));
  ExperimentFacts facts;
  TuneOptions options;
  OptionTraits<TuneOptions>::read(config.tree["tune"], options,
                                  ReadContext{"tune", &config.origins});
  if (options.metric.empty())
    throw ConfigError("tune.metric", "",
                      "a study of a program needs the name of the value it reports to judge "
                      "trials by (kiln-metric NAME=VALUE)");
  if (options.mode == ModeOrAuto::kAuto)
    throw ConfigError(
        "tune.mode", "",
        "a study of a program needs min or max: which way " + options.metric + " is better");
  if (options.nproc != 1)
    throw ConfigError("tune.nproc", "",
                      "starts kiln train's processes; a program (tune.command) starts its own");
  const Json& seed = config.tree.value("seed", Json(1));
  if (!seed.is_number_integer() || seed.get<int64_t>() < 0)
    throw ConfigError("seed", config.origins.find("seed"),
                      "a whole number from 0, not " + show_value(seed));
  facts.seed = seed.get<int64_t>();
  facts.tune = std::move(options);
  return facts;
}

void use_space_file(RawConfig& config, const std::string& file) {
  Json space = load_config_file(file);
  if (!space.is_object() || space.empty())
    throw ConfigError("tune.space", file,
                      "the --space file must map config paths to distributions, e.g. "
                      "{optimizer.lr: {type: loguniform, low: 1.0e-4, high: 0.1}}");
  Json& tune = config.tree["tune"];
  if (!tune.is_null() && !tune.is_object())
    throw ConfigError("tune", config.origins.find("tune"),
                      "must be a mapping (metric, trials, sampler, space, ...) to take --space");
  tune["space"] = space;
  config.origins.record("tune.space", space, file);
}

int run_study_command(const StudyCommand& command) {
  std::string name = command.config.tree.value("name", "experiment");
  std::string study_name = command.study.empty() ? default_study_name() : command.study;
  fs::path study_dir = fs::path(command.runs_root) / name / study_name;
  return command.resume ? resume_study(command, study_dir)
                        : start_study(command, study_dir, study_name);
}

}  // namespace kiln::tune
