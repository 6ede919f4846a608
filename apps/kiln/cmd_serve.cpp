// kiln serve MODEL_DIR... | --model-config FILE [--host H] [--port P] [--poll-seconds S]
//            [--max-request-rows N] [--max-body-bytes N] [--token-file F] [--threads N]
//            [--max-batch N] [--batch-timeout-us T] [--batch-threads N] [--max-queued N]

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "apps/kiln/cli.h"
#include "apps/kiln/stop_signals.h"
#include "kiln/core/error.h"
#include "kiln/engine/runtime.h"
#include "kiln/export/exported_servable.h"
#include "kiln/serving/batcher.h"
#include "kiln/serving/http_server.h"
#include "kiln/serving/version_watcher.h"

namespace kiln::cli {
namespace {

struct ServeArgs {
  std::vector<std::string> model_dirs;
  std::string model_config, model_name, host = "127.0.0.1", token_file;
  int port = 8501;
  double poll_seconds = 1;
  int64_t max_rows = 1024, max_body_bytes = 16 << 20;
  int64_t threads = 1;
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

// A server that would start serving nothing (a folder that is not there, or holds no version that
// loads) or a label on a version not loaded is refused at start, naming the folder: it is a typo
// far more often than a version yet to come.
void check_every_model_serves(const std::vector<serving::ServedModel>& models,
                              const serving::ModelTable& table) {
  std::map<std::string, size_t> served = table.models();
  for (const serving::ServedModel& model : models) {
    std::error_code error;
    if (!std::filesystem::is_directory(model.base_path, error))
      throw DataError(
          model.base_path, -1, -1,
          fmt::format("model {}: no such folder (the base path of its versions)", model.name));
    if (!served.count(model.name))
      throw DataError(model.base_path, -1, -1,
                      fmt::format("model {}: no version loaded from this folder (a version is a "
                                  "numbered folder an export wrote; see above for any refused)",
                                  model.name));
    serving::Route all;
    all.model = model.name;
    std::vector<int64_t> loaded = table.status_versions(all);
    for (const auto& [label, version] : model.labels)
      if (std::find(loaded.begin(), loaded.end(), version) == loaded.end())
        throw DataError(model.base_path, -1, -1,
                        fmt::format("model {}: label \"{}\" names version {}, which is not loaded "
                                    "(loaded: {})",
                                    model.name, label, version, fmt::join(loaded, ", ")));
  }
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
    serve_log(fmt::format("model {}: {}: {}", model, directory, loaded->optimize_for_inference()));
  auto servable = std::make_shared<exports::ExportedServable>(loaded);
  return std::make_shared<serving::BatchingServable>(
      servable, args.batching,
      [model, &metrics](int64_t examples) { metrics.batch(model, examples); });
}

// Serves on one thread and polls the base paths on another while this one waits for SIGINT or
// SIGTERM (stop_signals.h: blocked in the server's threads, so no handler runs in its code).
int run_serve(const ServeArgs& args) {
  // Before the batchers' and LibTorch's threads start, which inherit the blocked signals.
  StopSignals stops;
  engine::set_intra_op_threads(args.threads);
  serving::ServingMetrics metrics;  // before the table: its versions' batchers report here
  serving::ModelTable table;
  std::vector<serving::ServedModel> models = served_models(args);
  serving::VersionWatcher watcher(
      models, table,
      [&args, &metrics](const std::string& model, const std::string& directory) {
        return load_version(model, directory, args, metrics);
      },
      serve_log);
  watcher.poll();
  check_every_model_serves(models, table);
  serving::HttpOptions http;
  http.max_body_bytes = args.max_body_bytes;
  http.log = serve_log;
  if (!args.token_file.empty()) http.token = serving::read_token_file(args.token_file);
  serving::RestHandler handler(table, {args.max_rows}, &metrics);
  serving::HttpServer server(handler, http);
  int port = server.bind(args.host, args.port);

  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread serving([&server] { server.serve(); });
  std::thread polling([&] {
    std::unique_lock<std::mutex> lock(mutex);
    auto period = std::chrono::duration<double>(args.poll_seconds);
    while (!wake.wait_for(lock, period, [&] { return stopping; })) watcher.poll();
  });
  for (const auto& [name, versions] : table.models())
    std::printf("kiln serve: http://%s:%d/v1/models/%s (%zu version%s)\n", args.host.c_str(), port,
                name.c_str(), versions, versions == 1 ? "" : "s");
  std::printf("kiln serve: listening on %s:%d (Ctrl-C stops)\n", args.host.c_str(), port);
  std::fflush(stdout);
  stops.wait();
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  polling.join();
  // A drain: requests that come now are answered 503, those in flight are answered first.
  serve_log(fmt::format("stopping: draining {} request(s) in flight", handler.in_flight()));
  int64_t left = handler.drain(std::chrono::seconds(30));
  if (left > 0) serve_log(fmt::format("stopped with {} request(s) unanswered after 30 s", left));
  server.stop();
  serving.join();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "serve", "Serve exported models over TensorFlow Serving's REST API (docs/serving.md)");
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
      ->add_option("--poll-seconds", args->poll_seconds,
                   "How often to look for new versions in the folders")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--max-request-rows", args->max_rows, "Examples in one request, at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--max-body-bytes", args->max_body_bytes, "Bytes of one request body, at most")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--max-batch", args->batching.max_batch,
                   "Examples batched together; 0 runs each request alone")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command
      ->add_option("--batch-timeout-us", args->batching.timeout_us,
                   "How long a batch's first request waits for more; 0: only what queued")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  // As TensorFlow Serving's num_batch_threads: as many batches at once as the machine has cores.
  args->batching.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  command
      ->add_option("--batch-threads", args->batching.threads,
                   "Batches run at once, each on a thread of its own (default: the cores)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--max-queued", args->batching.max_queued,
                   "Requests waiting per version; one more is answered 503")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
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
