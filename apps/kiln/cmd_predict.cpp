// kiln predict (RUN_DIR|EXPORT_DIR) --input FILE [--output FILE] [--format jsonl|csv]
// kiln predict --server URL --input FILE [--output FILE] [--concurrency N]

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/export/predict.h"
#include "kiln/serving/client/grpc_client.h"
#include "kiln/serving/client/predict_client.h"
#include "kiln/serving/rest/http_server.h"

namespace kiln::cli {
namespace {

struct PredictArgs {
  exports::PredictOptions offline;
  serving::ClientOptions client;
  std::string token_file;
  bool no_optimize = false;
};

int run_predict(PredictArgs args) {
  if (args.client.url.empty() == args.offline.source.empty())
    throw UsageError("give a model (a run, checkpoint or export folder) or --server URL, not both");
  args.offline.optimize = !args.no_optimize;
  if (args.offline.source.empty()) {
    args.client.input = args.offline.input;
    args.client.output = args.offline.output;
    args.client.signature = args.offline.signature;
    if (!args.token_file.empty()) args.client.token = serving::read_token_file(args.token_file);
    bool grpc = args.client.url.rfind("grpc://", 0) == 0;
    serving::ClientReport report =
        grpc ? serving::run_grpc_client(args.client) : serving::run_client(args.client);
    // On stderr, so that the answers on stdout stay machine-readable.
    std::fprintf(stderr,
                 "%lld requests in %.2f s: %.0f requests/s at concurrency %d; latency p50 %.2f ms, "
                 "p90 %.2f ms, p99 %.2f ms; %lld failed\n",
                 static_cast<long long>(report.requests), report.seconds,
                 report.requests / std::max(report.seconds, 1e-9), args.client.concurrency,
                 report.p50_ms, report.p90_ms, report.p99_ms,
                 static_cast<long long>(report.failed));
    return report.failed == 0 ? 0 : 1;
  }
  exports::predict_file(args.offline, stderr);
  return 0;
}

}  // namespace

void add_predict_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "predict", "Predict a file of examples offline, or send it to a server (docs/serving.md)");
  auto args = std::make_shared<PredictArgs>();
  command
      ->add_option("source", args->offline.source,
                   "A run, a checkpoint, an export's version folder or its model folder")
      ->check(CLI::ExistingDirectory);
  command
      ->add_option(
          "--input", args->offline.input,
          "Examples: JSON lines (one instance each), IDX images, PNG/JPEG files (a file or a "
          "folder of them), or TFRecord or CSV files read as the model's data was")
      ->required()
      ->check(CLI::ExistingPath);
  command->add_option("--output", args->offline.output, "Where to write (default: stdout)");
  command->add_option("--format", args->offline.format, "jsonl or csv (offline)")
      ->check(CLI::IsMember({"jsonl", "csv"}))
      ->capture_default_str();
  command
      ->add_option("--checkpoint", args->offline.checkpoint,
                   "Of a run: best, last or a checkpoint directory")
      ->capture_default_str();
  command->add_option("--signature", args->offline.signature, "Which signature to run")
      ->capture_default_str();
  command->add_option("--batch", args->offline.batch, "Examples per batch (offline)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--no-optimize", args->no_optimize,
                    "Run the model as loaded: no batch norms folded, no TorchScript freezing "
                    "(offline)");
  command->add_option("--server", args->client.url,
                      "A TensorFlow Serving API: http://HOST:PORT/v1/models/NAME (REST) or "
                      "grpc://HOST:PORT/v1/models/NAME (gRPC)");
  command->add_option("--concurrency", args->client.concurrency, "Requests at once (--server)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--token-file", args->token_file, "A bearer token for the server")
      ->check(CLI::ExistingFile);
  command->callback([&action, args] { action = [args] { return run_predict(*args); }; });
}

}  // namespace kiln::cli
