// kiln data stats CONFIG... [--set K=V]... [--top N] [--json]: every feature of a tabular
// training split (records read through feature columns): type, records that have it, missing,
// min/max/mean/std of its numbers, its most frequent values; and the columns' fitted widths.

#include <fmt/format.h>

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/config.h"
#include "kiln/core/console.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_codec.h"
#include "kiln/core/usable_cpus.h"
#include "kiln/engine/runtime.h"
#include "kiln/experiment/experiment.h"
#include "kiln/tabular/feature_statistics.h"

namespace kiln::cli {
namespace {

struct StatsArgs {
  ConfigArgs config;
  int64_t top = 5;
  bool json = false;
};

std::string number_text(const Json& value) {
  return value.is_null() ? "" : fmt::format("{:.6g}", value.get<double>());
}

std::string top_text(const Json& row) {
  if (!row.contains("top")) return "";
  std::string text = fmt::format("{} distinct:", row["distinct"].get<int64_t>());
  for (const Json& v : row["top"])
    text += fmt::format(" {} ({})", terminal_text(v["value"].get<std::string>()),
                        v["count"].get<int64_t>());
  return text;
}

void print_table(const Json& stats) {
  std::printf("%lld training records\n\n", static_cast<long long>(stats["records"].get<int64_t>()));
  std::printf("%-24s %-11s %8s %8s %11s %11s %11s %11s  %s\n", "feature", "type", "records",
              "missing", "min", "max", "mean", "std", "top values");
  for (const auto& [name, row] : stats["features"].items())
    std::printf("%-24s %-11s %8lld %8lld %11s %11s %11s %11s  %s\n", terminal_text(name).c_str(),
                row["type"].get<std::string>().c_str(),
                static_cast<long long>(row["records"].get<int64_t>()),
                static_cast<long long>(row["missing"].get<int64_t>()),
                number_text(row.value("min", Json())).c_str(),
                number_text(row.value("max", Json())).c_str(),
                number_text(row.value("mean", Json())).c_str(),
                number_text(row.value("std", Json())).c_str(), top_text(row).c_str());
}

void print_speed(const Json& stats) {
  double records = stats["records"], reading = stats["read_seconds"], pass = stats["pass_seconds"];
  std::printf("read and fitted in %.2f s (%.0f records/s), described in %.2f s (%.0f records/s)\n",
              reading, records / reading, pass, records / pass);
}

int run_stats(const StatsArgs& args) {
  experiment::ExperimentConfig config =
      experiment::parse_experiment(load_config(args.config.files, args.config.overrides));
  engine::Runtime runtime = experiment::runtime_of(config);
  runtime.apply();
  experiment::Experiment experiment(std::move(config), runtime.device);
  double started = steady_seconds();
  auto records = experiment.training_records();
  double read = steady_seconds();
  if (!records)
    throw UsageError(
        "data stats reads tabular training data: a tfrecord or csv dataset with a list of "
        "inputs (docs/tabular.md)");
  int64_t threads = usable_cpus().count;
  Json stats = tabular::feature_table_json(tabular::describe_features(*records, threads), args.top);
  double described = steady_seconds();
  stats["preprocessing"] = experiment.preprocessing();
  // Reading includes parsing every cell and fitting the columns; the pass is this table's.
  stats["read_seconds"] = read - started;
  stats["pass_seconds"] = described - read;
  if (args.json) {
    std::printf("%s\n", dump_json(stats).c_str());
    return 0;
  }
  print_table(stats);
  std::printf("\ninput: %lld numbers from %zu columns\n",
              static_cast<long long>(stats["preprocessing"]["width"].get<int64_t>()),
              stats["preprocessing"]["columns"].size());
  print_speed(stats);
  return 0;
}

}  // namespace

void add_data_stats_command(CLI::App& data, Action& action) {
  auto* stats = data.add_subcommand(
      "stats", "Describe the features of a tabular training split (docs/tabular.md)");
  auto args = std::make_shared<StatsArgs>();
  args->config.add_to(*stats);
  stats->add_option("--top", args->top, "Most frequent values shown per feature")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  stats->add_flag("--json", args->json, "Print exactly one JSON object");
  stats->callback([&action, args] { action = [args] { return run_stats(*args); }; });
}

}  // namespace kiln::cli
