// kiln eval RUN_DIR [--checkpoint best|last|PATH] [--split val|test] [--json]

#include <algorithm>
#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"
#include "kiln/experiment/training_run.h"

namespace kiln::cli {
namespace {

struct EvalArgs {
  std::string run_dir, checkpoint = "last", split = "val";
  bool json = false;
};

int run_eval(const EvalArgs& args) {
  experiment::RunEvaluation evaluation =
      experiment::evaluate_run(args.run_dir, args.checkpoint, args.split, steady_seconds);
  const engine::MetricValues& values = evaluation.values;
  // On stderr, so that the values on stdout stay machine-readable.
  std::fprintf(stderr, "%s: %lld examples in %.2f s, %.0f examples/s\n", args.split.c_str(),
               static_cast<long long>(evaluation.examples), evaluation.seconds,
               evaluation.examples / std::max(evaluation.seconds, 1e-9));
  if (!evaluation.unseen.empty())
    std::fprintf(stderr, "%s: values in no vocabulary went to OOV buckets: %s\n",
                 args.split.c_str(), data::unseen_text(evaluation.unseen).c_str());
  if (args.json) {
    Json out = Json::object();
    for (const auto& [tag, value] : values) out[tag] = value;
    std::printf("%s\n", dump_json(out).c_str());
  } else {
    for (const auto& [tag, value] : values) std::printf("%-20s %.4f\n", tag.c_str(), value);
  }
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app, Action& action) {
  auto* eval = app.add_subcommand("eval", "Evaluate a run's checkpoint on a split");
  auto args = std::make_shared<EvalArgs>();
  eval->add_option("run_dir", args->run_dir, "The run directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  eval->add_option("--checkpoint", args->checkpoint, "best, last or a checkpoint directory")
      ->capture_default_str();
  eval->add_option("--split", args->split, "Which dataset of the config: train, val or test")
      ->check(CLI::IsMember({"train", "val", "test"}))
      ->capture_default_str();
  eval->add_flag("--json", args->json, "Print one JSON object of tagged values");
  eval->callback([&action, args] { action = [args] { return run_eval(*args); }; });
}

}  // namespace kiln::cli
