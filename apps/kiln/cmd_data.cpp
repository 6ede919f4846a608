// kiln data inspect FILE [--json] [--compression auto|none|gzip|zlib]; `data convert` is in
// cmd_data_convert.cpp.

#include <fmt/format.h>

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/json_text.h"
#include "kiln/io/record_inspect.h"

namespace kiln::cli {
namespace {

struct InspectArgs {
  std::string file, compression = "auto";
  bool json = false;
};

std::string length_range(const Json& stats) {
  auto low = stats["min_len"].get<int64_t>(), high = stats["max_len"].get<int64_t>();
  return low == high ? std::to_string(low) : fmt::format("{}..{}", low, high);
}

void print_schema(const Json& schema, const char* title) {
  std::printf("%-24s %-11s %-9s %s\n", title, "type", "length", "in records");
  for (const auto& [name, stats] : schema.items())
    std::printf("%-24s %-11s %-9s %lld\n", name.c_str(), stats["type"].get<std::string>().c_str(),
                length_range(stats).c_str(),
                static_cast<long long>(stats["records_with"].get<int64_t>()));
}

void print_report(const std::string& file, const Json& report) {
  std::printf("%s: %lld records, compression %s, %s\n\n", file.c_str(),
              static_cast<long long>(report["records"].get<int64_t>()),
              report["compression"].get<std::string>().c_str(),
              report["kind"].get<std::string>() == "example" ? "tf.Example" : "tf.SequenceExample");
  print_schema(report["features"], "feature");
  if (report.contains("feature_lists")) {
    std::printf("\n");
    print_schema(report["feature_lists"], "feature list (steps)");
  }
  std::printf("\nfirst record:\n");
  for (const auto& [name, values] : report["first"].items())
    std::printf("  %s: %s\n", name.c_str(), dump_json(values).c_str());
}

int run_inspect(const InspectArgs& args) {
  std::optional<io::Compression> compression;
  if (args.compression != "auto") compression = io::parse_compression(args.compression);
  Json report = io::inspect_tfrecord(args.file, compression);
  if (args.json)
    std::printf("%s\n", report.dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
  else
    print_report(args.file, report);
  return 0;
}

void add_inspect_command(CLI::App& data, Action& action) {
  auto* inspect = data.add_subcommand(
      "inspect", "Count the records of a TFRecord file, show its schema and its first record");
  auto args = std::make_shared<InspectArgs>();
  inspect->add_option("file", args->file, "A TFRecord file (tf.Example or tf.SequenceExample)")
      ->required()
      ->check(CLI::ExistingFile);
  inspect->add_option("--compression", args->compression, "auto (detect), none, gzip or zlib")
      ->check(CLI::IsMember({"auto", "none", "gzip", "zlib"}))
      ->capture_default_str();
  inspect->add_flag("--json", args->json, "Print exactly one JSON object");
  inspect->callback([&action, args] { action = [args] { return run_inspect(*args); }; });
}

}  // namespace

void add_data_command(CLI::App& app, Action& action) {
  auto* data = app.add_subcommand("data", "Inspect, convert and benchmark datasets");
  data->require_subcommand(1);
  add_inspect_command(*data, action);
  add_data_convert_command(*data, action);
  add_data_bench_command(*data, action);
  add_data_stats_command(*data, action);
}

}  // namespace kiln::cli
