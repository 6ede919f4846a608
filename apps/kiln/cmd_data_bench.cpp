// kiln data bench CONFIG... [--set K=V]... [--split train] [--epochs N] [--json]: how many examples
// per second the input pipeline of a config delivers, without training.

#include <fmt/format.h>

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/bench/pipeline_bench.h"
#include "kiln/core/config.h"
#include "kiln/engine/runtime.h"

namespace kiln::cli {
namespace {

struct BenchArgs {
  ConfigArgs config;
  std::string split = "train";
  int64_t epochs = 1;
  bool json = false;
};

int run_bench(const BenchArgs& args) {
  experiment::ExperimentConfig config =
      experiment::parse_experiment(load_config(args.config.files, args.config.overrides));
  engine::Runtime runtime = experiment::runtime_of(config);
  runtime.apply();
  experiment::Experiment experiment(std::move(config), runtime.device);
  bench::PipelineRate rate =
      bench::time_pipeline(experiment, args.split, args.epochs, steady_seconds);
  const auto& data = experiment.config().data;
  if (args.json) {
    Json out = {{"split", args.split},     {"epochs", rate.epochs},
                {"batches", rate.batches}, {"examples", rate.examples},
                {"seconds", rate.seconds}, {"examples_per_s", rate.examples_per_second()},
                {"workers", data.workers}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "%s: %lld examples in %lld batches over %lld epochs, %.2f s: %.0f examples/s "
        "(%lld workers)\n",
        args.split.c_str(), static_cast<long long>(rate.examples),
        static_cast<long long>(rate.batches), static_cast<long long>(rate.epochs), rate.seconds,
        rate.examples_per_second(), static_cast<long long>(data.workers));
  }
  return 0;
}

}  // namespace

void add_data_bench_command(CLI::App& data, Action& action) {
  auto* bench = data.add_subcommand(
      "bench", "Time a config's input pipeline (loading, decoding, transforms) without training");
  auto args = std::make_shared<BenchArgs>();
  args->config.add_to(*bench);
  bench->add_option("--split", args->split, "train, val or test")
      ->check(CLI::IsMember({"train", "val", "test"}))
      ->capture_default_str();
  bench->add_option("--epochs", args->epochs, "Epochs to pull")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  bench->add_flag("--json", args->json, "Print exactly one JSON object");
  bench->callback([&action, args] { action = [args] { return run_bench(*args); }; });
}

}  // namespace kiln::cli
