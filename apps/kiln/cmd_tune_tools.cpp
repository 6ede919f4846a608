// kiln tune show STUDY [--best-config FILE]: a study's trials, best trial, parameter importance,
// and the best trial's config ready for `kiln train` (for a study of a program, its command line).
// kiln tune benchmark --function NAME --trials N --seed S [--sampler SPEC]: a sampler on an
// instant test function (benchmarks/tune.sh compares it with Optuna's).

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/core/json_text.h"
#include "kiln/tune/command_line.h"
#include "kiln/tune/study_report.h"
#include "kiln/tune/test_functions.h"

namespace kiln::cli {
namespace {
namespace fs = std::filesystem;

struct ShowArgs {
  std::string study, best_config;
};

// The best trial's config, with the threads its run had (a study of parallel trials gives each
// a share of the cores), so that `kiln train` of it repeats the trial exactly: CPU kernels sum in
// an order that depends on the threads. Returns the threads set, 0 for none.
int64_t keep_trial_threads(const fs::path& folder, const tune::TrialRecord& trial, Json& tree) {
  fs::path saved = folder / "configs" / (tune::trial_folder(trial.number) + ".yaml");
  if (!fs::exists(saved)) return 0;
  try {
    Json threads = load_config_file(saved.string())["runtime"]["threads"];
    if (!threads.is_number_integer()) return 0;
    tree["runtime"]["threads"] = threads;
    return threads.get<int64_t>();
  } catch (const Error&) {
    return 0;  // a damaged trial config: the study's own config stands
  }
}

// Each parameter's importance by fANOVA (most important first) beside the share of the value's
// variance that grouping the trials by it explains.
void print_importance(const std::vector<std::pair<std::string, double>>& fanova,
                      const std::vector<std::pair<std::string, double>>& grouped) {
  if (fanova.empty() && grouped.empty()) return;
  std::printf(
      "\nimportance (fANOVA, as Optuna's; and the share of the value's variance that "
      "grouping the trials by each explains):\n");
  std::printf("  %-24s %-7s %s\n", "parameter", "fANOVA", "grouped");
  auto share_of = [](const auto& shares, const std::string& name) {
    for (const auto& [n, share] : shares)
      if (n == name) return fmt::format("{:.2f}", share);
    return std::string("-");
  };
  std::vector<std::string> names;
  for (const auto& [name, share] : fanova) names.push_back(name);
  for (const auto& [name, share] : grouped)
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  for (const std::string& name : names)
    std::printf("  %-24s %-7s %s\n", name.c_str(), share_of(fanova, name).c_str(),
                share_of(grouped, name).c_str());
}

// `words` as a shell reads them back: each quoted unless it is plain.
std::string shell_words(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& word : words) {
    bool plain = !word.empty() && word.find_first_not_of(
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_./=:,+-@%") == std::string::npos;
    std::string quoted = "'";
    for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += (line.empty() ? "" : " ") + (plain ? word : quoted + "'");
  }
  return line;
}

// The command line of the best trial of a study of a program (tune.command), to run it again;
// none for a study of kiln train. The study's saved config may have been damaged.
std::optional<std::vector<std::string>> best_command_line(const tune::StudyInfo& info,
                                                          const tune::SearchSpace& space,
                                                          const fs::path& folder,
                                                          const tune::TrialRecord& best) {
  const Json& command = info.config.at("tune").value("command", Json());
  if (!command.is_array() || command.empty()) return std::nullopt;
  std::vector<std::string> words;
  for (const Json& word : command) {
    if (!word.is_string())
      throw Error("study.db: the study's tune.command holds " + show_value(word) +
                  ", not text: the database is damaged");
    words.push_back(word.get<std::string>());
  }
  return tune::trial_command_line(words, space, best.assignment, best.number,
                                  (folder / best.run_dir).string());
}

int show_study(const ShowArgs& args) {
  fs::path folder =
      fs::is_directory(args.study) ? fs::path(args.study) : fs::path(args.study).parent_path();
  tune::Study study = tune::Study::open((folder / "study.db").string());
  tune::StudyInfo info = study.info();
  tune::SearchSpace space = tune::study_space(info);
  std::vector<tune::TrialRecord> trials = study.trials();
  std::map<std::string, int> states;
  for (const tune::TrialRecord& t : trials) states[tune::state_name(t.state)] += 1;
  std::string counts;
  for (const auto& [state, n] : states)
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, state);
  std::printf("study %s (%s): %s, %s; %zu trials%s%s\n\n", info.name.c_str(),
              folder.string().c_str(), info.metric.c_str(), info.maximize ? "max" : "min",
              trials.size(), counts.empty() ? "" : ": ", counts.c_str());
  std::printf("%s\n", tune::trials_table(info, space, trials).c_str());
  std::optional<tune::TrialRecord> best = tune::best_trial(trials, info.maximize);
  if (!best) {
    std::printf("no trial has completed yet\n");
    return 0;
  }
  std::printf("best: trial %lld, %s %.6g, %s\n", static_cast<long long>(best->number),
              info.metric.c_str(), *best->value, dump_json(best->values).c_str());
  print_importance(tune::fanova_importance(space, trials), tune::importance(space, trials));
  if (std::optional<std::vector<std::string>> line =
          best_command_line(info, space, folder, *best)) {
    std::printf("\nbest command: %s\n", shell_words(*line).c_str());
    return 0;
  }
  std::string file = args.best_config.empty() ? (folder / "best.yaml").string() : args.best_config;
  Json tree = tune::trial_config_tree(info, space, *best);
  int64_t threads = keep_trial_threads(folder, *best, tree);
  std::ofstream(file) << to_yaml(tree);
  std::printf("\nbest config: %s (kiln train %s)\n", file.c_str(), file.c_str());
  if (threads > 0)
    std::printf(
        "  with runtime.threads: %lld, as the trial ran, to repeat it exactly; "
        "--set runtime.threads=auto trains faster, with the last digits changed\n",
        static_cast<long long>(threads));
  return 0;
}

struct BenchmarkArgs {
  std::string function, sampler = "tpe";
  int64_t trials = 50, seed = 1;
};

int benchmark_sampler(const BenchmarkArgs& args) {
  const tune::TestFunction& function = tune::test_function(args.function);
  ComponentSpec spec("sampler");
  OptionTraits<ComponentSpec>::read(parse_config_text(args.sampler, "--sampler", false), spec,
                                    {"--sampler", nullptr});
  auto sampler = tune::sampler_registry().create(spec, uint64_t(args.seed));
  tune::SamplerRun run = tune::run_sampler(function, *sampler, args.trials);
  Json out = {{"function", function.name},
              {"sampler", spec.type()},
              {"seed", args.seed},
              {"trials", int64_t(run.best_after.size())},
              {"best", run.best_after.empty() ? Json() : Json(run.best_after.back())},
              {"best_after", run.best_after},
              {"sampler_seconds_per_trial",
               run.sampling_seconds / double(std::max<size_t>(run.best_after.size(), 1))}};
  std::printf("%s\n", dump_json(out).c_str());
  return 0;
}

}  // namespace

void add_tune_tools(CLI::App& tune, Action& action) {
  auto show_args = std::make_shared<ShowArgs>();
  auto* show = tune.add_subcommand("show", "A study's trials, best trial and importances");
  show->add_option("study", show_args->study, "The study's folder (or its study.db)")
      ->required()
      ->check(CLI::ExistingPath);
  show->add_option("--best-config", show_args->best_config,
                   "Where the best trial's config goes (default: STUDY/best.yaml)");
  show->callback([&action, show_args] { action = [show_args] { return show_study(*show_args); }; });

  auto bench_args = std::make_shared<BenchmarkArgs>();
  auto* bench = tune.add_subcommand(
      "benchmark", "A sampler on an instant test function, as one JSON line (benchmarks/tune.sh)");
  bench
      ->add_option("--function", bench_args->function,
                   "branin, hartmann6, conditional or classifier")
      ->required();
  bench->add_option("--trials", bench_args->trials, "Trials")->check(CLI::Range(1, 100000));
  bench->add_option("--seed", bench_args->seed, "The sampler's seed");
  bench->add_option("--sampler", bench_args->sampler, "The sampler, as tune.sampler takes it")
      ->capture_default_str();
  bench->callback(
      [&action, bench_args] { action = [bench_args] { return benchmark_sampler(*bench_args); }; });
}

}  // namespace kiln::cli
