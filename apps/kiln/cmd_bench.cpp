// kiln bench CONFIG... [--set K=V]... [--steps N] [--warmup N] [--pipeline-batches N] [--depth N]
// [--json]: what a training step of a config costs, layer by layer (bench/training_bench.h).

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/bench/training_bench.h"
#include "kiln/core/config.h"

namespace kiln::cli {
namespace {

struct TrainingBenchArgs {
  ConfigArgs config;
  bench::BenchOptions options;
  int depth = -1;
  bool json = false;
};

int run_training_bench(const TrainingBenchArgs& args) {
  RawConfig raw = load_config(args.config.files, args.config.overrides);
  if (!args.json)
    std::fprintf(stderr, "timing %lld training steps after %lld warm-up steps...\n",
                 static_cast<long long>(args.options.steps),
                 static_cast<long long>(args.options.warmup));
  bench::TrainingCost cost = bench::bench_training(raw, args.options, steady_seconds);
  if (args.json)
    std::printf("%s\n", bench::training_cost_json(cost).dump().c_str());
  else
    std::fputs(bench::format_training_cost(cost, args.depth).c_str(), stdout);
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Action& action) {
  auto* bench = app.add_subcommand(
      "bench",
      "Time a config's training step: each layer's forward and backward, the data wait, the "
      "optimizer's update, the input pipeline alone and peak memory");
  auto args = std::make_shared<TrainingBenchArgs>();
  args->config.add_to(*bench);
  bench->add_option("--steps", args->options.steps, "Steps measured")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--warmup", args->options.warmup, "Steps run first and not measured")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bench
      ->add_option("--pipeline-batches", args->options.pipeline_batches,
                   "Batches the input pipeline is timed on, alone")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_option("--depth", args->depth, "Show modules nested at most this deep");
  bench->add_flag("--json", args->json, "Print exactly one JSON object");
  bench->callback([&action, args] { action = [args] { return run_training_bench(*args); }; });
}

}  // namespace kiln::cli
