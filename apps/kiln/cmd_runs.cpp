// kiln runs [ROOT] [--sort KEY] [--filter EXPR]... [--json | --csv]
// kiln runs compare RUN RUN...
// kiln runs note RUN TEXT

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/run/run_notes.h"
#include "kiln/run/run_query.h"
#include "kiln/run/run_table.h"

namespace kiln::cli {
namespace {

struct RunsArgs {
  std::string root = "runs", sort;
  std::vector<std::string> filters;
  bool json = false, csv = false;
  std::vector<std::string> compared;
  std::string noted, note;
};

int list_runs(const RunsArgs& args) {
  std::vector<run::RunFilter> filters;
  for (const std::string& text : args.filters) filters.push_back(run::RunFilter::parse(text));
  std::vector<run::RunInfo> listed =
      run::filtered(run::read_runs(run::find_runs(args.root)), filters);
  if (!args.sort.empty()) run::sort_runs(listed, args.sort);
  std::string out = args.json  ? run::runs_json(listed)
                    : args.csv ? run::runs_csv(listed)
                               : run::runs_table(listed);
  std::fputs(out.c_str(), stdout);
  return 0;
}

int compare_runs(const RunsArgs& args) {
  for (const std::string& path : args.compared)
    if (run::find_runs(path) != std::vector<std::string>{path})
      throw UsageError(path + ": not a run folder (it has no run.json or metrics.csv)");
  std::fputs(run::compare_table(run::read_runs(args.compared)).c_str(), stdout);
  return 0;
}

}  // namespace

void add_runs_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand("runs", "List, filter, sort and compare run folders");
  auto args = std::make_shared<RunsArgs>();
  command->add_option("root", args->root, "A folder of runs, searched at any depth")
      ->capture_default_str();
  command->add_option("--sort", args->sort,
                      "Order by a field (name, start, duration, steps, best, ...), a tag "
                      "(val/accuracy) or a config value (optimizer.lr); -KEY: descending");
  command->add_option("--filter", args->filters,
                      "Keep runs where KEY=GLOB, KEY!=GLOB, KEY<N, KEY<=N, KEY>N or KEY>=N "
                      "(status=finished, val/accuracy>0.9, name=fashion*); repeatable");
  auto* json = command->add_flag("--json", args->json, "One JSON array, every field of each run");
  command->add_flag("--csv", args->csv, "The table as CSV")->excludes(json);
  command->callback([&action, args, command] {
    if (command->get_subcommands().empty()) action = [args] { return list_runs(*args); };
  });

  auto* compare = command->add_subcommand("compare", "Config differences and metrics side by side");
  compare->add_option("runs", args->compared, "Run folders")->required()->expected(2, -1);
  compare->callback([&action, args] { action = [args] { return compare_runs(*args); }; });

  auto* note = command->add_subcommand("note", "Append a paragraph to a run's notes.md");
  note->add_option("run", args->noted, "The run folder")->required();
  note->add_option("text", args->note, "What to note")->required();
  note->callback([&action, args] {
    action = [args] {
      run::append_note(args->noted, args->note);
      return 0;
    };
  });
}

}  // namespace kiln::cli
