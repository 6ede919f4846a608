// kiln serve MODEL_DIR... | --model-config FILE [--host H] [--port P] [--poll-seconds S]
//            [--max-request-rows N] [--max-body-bytes N] [--token-file F] [--threads N]
//            [--max-batch N] [--batch-timeout-us T] [--batch-threads N] [--max-queued N]
//            [--grpc-port P] [--grpc-threads N] [--max-connections N] [--read-timeout S]

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "apps/kiln/cli.h"
#include "apps/kiln/stop_signals.h"
#include "kiln/core/error.h"
#include "kiln/core/usable_cpus.h"
#include "kiln/engine/runtime.h"
#include "kiln/experiment/run_environment.h"
#include "kiln/export/exported_servable.h"
#include "kiln/serving/batcher.h"
#include "kiln/serving/grpc/grpc_front.h"
#include "kiln/serving/model_server.h"
#include "kiln/serving/rest/rest_listener.h"

namespace kiln::cli {
namespace {

struct ServeArgs {
  std::vector<std::string> model_dirs;
  std::string model_config, model_name, host = "127.0.0.1", token_file;
  int port = 8501;
  int grpc_port = -1;  // none: REST only
  int grpc_threads = 1;
  double poll_seconds = 1;
  int64_t max_rows = 1024, max_body_bytes = 16 << 20;
  int64_t threads = 1;
  int max_connections = 4096, read_timeout_seconds = 10;  // each API's own
  int request_timeout_seconds = 30;
  int64_t max_pending_bytes = int64_t(256) << 20;
  int64_t max_queued_bytes = int64_t(512) << 20;
  serving::BatchingOptions batching;
  bool no_optimize = false;
};

// The models to serve: each folder's latest version under the folder's name, or the config file's.
std::vector<serving::ServedModel> served_models(const ServeArgs& args) {
  if (!args.model_config.empty()) return serving::read_model_config(args.model_config);
  if (args.model_dirs.empty())
    throw UsageError(
        "give the folder of a model's versions (an export's NAME folder), or "
        "--model-config FILE");
  if (!args.model_name.empty() && args.model_dirs.size() > 1)
    throw UsageError("--model-name names one model; give one folder with it");
  std::vector<serving::ServedModel> models;
  for (const std::string& dir : args.model_dirs) {
    serving::ServedModel model;
    model.base_path = std::filesystem::absolute(dir).lexically_normal().string();
    if (!model.base_path.empty() && model.base_path.back() == '/') model.base_path.pop_back();
    model.name = args.model_name.empty()
                     ? std::filesystem::path(model.base_path).filename().string()
                     : args.model_name;
    models.push_back(model);
  }
  return models;
}

// Versions loaded, retired and refused, on stdout as they happen (scripts and tests watch it).
void serve_log(const std::string& line) {
  std::printf("kiln serve: %s\n", line.c_str());
  std::fflush(stdout);
}

// A version folder of `model` as a servable, behind a batcher: with --max-batch 0 it runs each
// request alone, still on the batcher's thread, as the HTTP side's one thread never waits.
std::shared_ptr<serving::Servable> load_version(const std::string& model,
                                                const std::string& directory, const ServeArgs& args,
                                                serving::ServingMetrics& metrics) {
  std::shared_ptr<exports::ExportedModel> loaded =
      exports::ExportedModel::load(directory, torch::kCPU);
  if (!args.no_optimize)
    serve_log(fmt::format("model {}: {}: {}", model, directory,
                          loaded->optimize_for_inference(args.batching.max_batch)));
  auto servable = std::make_shared<exports::ExportedServable>(loaded);
  return std::make_shared<serving::BatchingServable>(
      servable, args.batching,
      [model, &metrics](int64_t examples) { metrics.batch(model, examples); });
}

// Reading a big JSON body is work for a CPU: as many readers as this process may use.
int body_readers() { return usable_cpus().count; }

// The REST API's options from the command line.
serving::RestListenerOptions rest_options(const ServeArgs& args, const std::string& token) {
  serving::RestListenerOptions rest;
  rest.host = args.host;
  rest.port = args.port;
  rest.rest.max_rows = args.max_rows;
  rest.http.max_body_bytes = args.max_body_bytes;
  rest.http.max_connections = args.max_connections;
  rest.http.read_timeout_seconds = args.read_timeout_seconds;
  rest.http.request_timeout_seconds = args.request_timeout_seconds;
  rest.http.max_pending_bytes = args.max_pending_bytes;
  rest.http.body_readers = body_readers();
  rest.http.token = token;
  return rest;
}

// The server's options from the command line: its models, the REST listener and, with
// --grpc-port, the gRPC one.
serving::ModelServerOptions server_options(const ServeArgs& args) {
  serving::ModelServerOptions options;
  options.models = served_models(args);
  options.poll_seconds = args.poll_seconds;
  options.log = serve_log;
  options.held = args.batching.held;
  std::string token = args.token_file.empty() ? "" : serving::read_token_file(args.token_file);
  options.listeners.push_back(serving::rest_listener(rest_options(args, token)));
  if (args.grpc_port >= 0) {
    serving::GrpcOptions grpc;
    grpc.host = args.host;
    grpc.port = args.grpc_port;
    grpc.token = token;
    grpc.max_message_bytes = args.max_body_bytes;
    grpc.max_rows = args.max_rows;
    grpc.threads = args.grpc_threads;
    grpc.max_connections = args.max_connections;
    grpc.read_timeout_seconds = args.read_timeout_seconds;
    grpc.request_timeout_seconds = args.request_timeout_seconds;
    grpc.max_pending_bytes = args.max_pending_bytes;
    grpc.readers = body_readers();
    options.listeners.push_back(serving::grpc_listener(grpc));
  }
  return options;
}

// Serves until SIGINT or SIGTERM (stop_signals.h: blocked in the server's threads, so no handler
// runs in its code), then drains.
int run_serve(ServeArgs args) {
  // Before the batchers' and LibTorch's threads start, which inherit the blocked signals.
  StopSignals stops;
  // One budget for the inputs of every version's requests (serving/held_bytes.h).
  args.batching.held = std::make_shared<serving::HeldBytes>(size_t(args.max_queued_bytes));
  engine::set_intra_op_threads(args.threads);
  serving::ModelServerOptions options = server_options(args);
  serving::ModelServer server(options,
                              [&args](const std::string& model, const std::string& directory,
                                      serving::ServingMetrics& metrics) {
                                return load_version(model, directory, args, metrics);
                              });
  server.start();
  // What the machine decided, said where it can be read: defaults follow the CPUs this process
  // may use (its affinity and cgroup quota), not those of the machine they were tuned on.
  serve_log(
      fmt::format("{} batch thread{} of {} intra-op thread{} each, {} reader{} of big "
                  "REST bodies; {}; CPU kernels: {}",
                  args.batching.threads, args.batching.threads == 1 ? "" : "s", args.threads,
                  args.threads == 1 ? "" : "s", body_readers(), body_readers() == 1 ? "" : "s",
                  usable_cpus().why, experiment::cpu_kernels_text()));
  for (const auto& [name, versions] : server.models())
    std::printf("kiln serve: http://%s:%d/v1/models/%s (%zu version%s)\n", args.host.c_str(),
                server.port(), name.c_str(), versions, versions == 1 ? "" : "s");
  std::vector<std::string> addresses = server.listener_addresses();
  for (size_t grpc = 1; grpc < addresses.size(); ++grpc)  // the first is REST's
    std::printf("kiln serve: %s (TensorFlow Serving's gRPC API)\n", addresses[grpc].c_str());
  std::printf("kiln serve: listening on %s:%d (Ctrl-C stops)\n", args.host.c_str(), server.port());
  std::fflush(stdout);
  stops.wait();
  server.stop(std::chrono::seconds(30));
  return 0;
}

}  // namespace

// How requests are batched (serving/batcher.h), as TensorFlow Serving's batching parameters.
void add_batching_options(CLI::App& command, serving::BatchingOptions& batching) {
  command
      .add_option("--max-batch", batching.max_batch,
                  "Examples batched together; 0 runs each request alone")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      .add_option("--batch-timeout-us", batching.timeout_us,
                  "How long a batch's first request waits for more; 0: only what queued")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  // As TensorFlow Serving's num_batch_threads: as many batches at once as this process may use
  // CPUs (usable_cpus.h: a container's quota, not the host's cores).
  batching.threads = usable_cpus().count;
  command
      .add_option("--batch-threads", batching.threads,
                  "Batches run at once, each on a thread of its own (default: the CPUs this "
                  "process may use)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--max-queued", batching.max_queued,
                  "Requests waiting per version; one more is answered 503")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

namespace {

// What one request, and all clients together, may hold (docs/serving.md, "Budgets").
void add_limit_options(CLI::App& command, ServeArgs& args) {
  command.add_option("--max-request-rows", args.max_rows, "Examples in one request, at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--max-body-bytes", args.max_body_bytes,
                  "Bytes of one request body (or gRPC message), at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--max-connections", args.max_connections,
                  "Connections open at once on each API's port (REST's further ones wait to be "
                  "accepted; gRPC's are closed at once)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  command
      .add_option("--read-timeout", args.read_timeout_seconds,
                  "Seconds a client may send nothing before it is dropped (a request cut short "
                  "is answered first: 400, or gRPC's DEADLINE_EXCEEDED)")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command
      .add_option("--request-timeout", args.request_timeout_seconds,
                  "Seconds a request may take to arrive whole from its first byte, however its "
                  "bytes trickle in (408, or gRPC's DEADLINE_EXCEEDED); a gRPC connection that "
                  "begins no call for --read-timeout is dropped, pings or not")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command
      .add_option("--max-pending-bytes", args.max_pending_bytes,
                  "Bytes of requests still arriving that all clients of an API together may have "
                  "the server hold; more are refused (413, RESOURCE_EXHAUSTED)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      .add_option("--max-queued-bytes", args.max_queued_bytes,
                  "Bytes that the inputs of requests waiting for or in every model together may "
                  "hold once read (numbers count 8 bytes); more are answered 503, UNAVAILABLE")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

}  // namespace

void add_serve_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "serve",
      "Serve exported models over TensorFlow Serving's REST and gRPC APIs (docs/serving.md)");
  auto args = std::make_shared<ServeArgs>();
  command->add_option("model_dirs", args->model_dirs,
                      "Folders of a model's versions (an export's NAME folder)");
  command
      ->add_option("--model-config", args->model_config,
                   "TensorFlow Serving's model config file (text format, or YAML/JSON)")
      ->check(CLI::ExistingFile);
  command->add_option("--model-name", args->model_name,
                      "The name to serve one folder's model under (default: the folder's)");
  command
      ->add_option("--host", args->host, "Address to listen on; 0.0.0.0 serves other machines too")
      ->capture_default_str();
  command->add_option("--port", args->port, "Port; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command
      ->add_option("--grpc-port", args->grpc_port,
                   "Serve TensorFlow Serving's gRPC API on this port too (8500 is its usual one); "
                   "0 picks a free one")
      ->check(CLI::Range(0, 65535));
  command
      ->add_option("--grpc-threads", args->grpc_threads,
                   "gRPC event loops, each taking connections and their calls (the models run on "
                   "the batchers' threads)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  command
      ->add_option("--poll-seconds", args->poll_seconds,
                   "How often to look for new versions in the folders")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_limit_options(*command, *args);
  add_batching_options(*command, args->batching);
  command
      ->add_option("--token-file", args->token_file,
                   "A file holding a token that requests must bear (Authorization: Bearer)")
      ->check(CLI::ExistingFile);
  command
      ->add_option("--threads", args->threads,
                   "Threads each batch runs on (LibTorch's intra-op threads)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("--no-optimize", args->no_optimize,
                    "Serve models as loaded: no batch norms folded, no TorchScript freezing");
  command->callback([&action, args] { action = [args] { return run_serve(*args); }; });
}

}  // namespace kiln::cli
