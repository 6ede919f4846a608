// kiln export RUN_DIR|CHECKPOINT [--checkpoint best|last|PATH] [--to DIR] [--name NAME]
//             [--format kiln|onnx] [--portable]

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/export/export.h"

namespace kiln::cli {
namespace {

int run_export(const exports::ExportRequest& request) {
  exports::ExportedVersion exported = exports::export_model(request);
  std::printf("exported %s (weights %s) as version %lld: %s\n", exported.checkpoint.c_str(),
              exported.weights.c_str(), static_cast<long long>(exported.version),
              exported.directory.c_str());
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "export", "Write a run's model as a new version folder for kiln serve (docs/serving.md)");
  auto request = std::make_shared<exports::ExportRequest>();
  command->add_option("source", request->source, "A run directory or a checkpoint directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  command->add_option("--checkpoint", request->checkpoint, "best, last or a checkpoint directory")
      ->capture_default_str();
  command->add_option("--to", request->to,
                      "Folder of exported models (default: the run's export/)");
  command->add_option("--name", request->name, "The model's name (default: the config's name)");
  command
      ->add_option("--format", request->format,
                   "kiln: kiln's own files; onnx: model.onnx too, the serving signature as ONNX "
                   "(docs/onnx.md)")
      ->check(CLI::IsMember(exports::export_formats()))
      ->capture_default_str();
  command->add_flag(
      "--portable", request->portable,
      "onnx: only operators that runtimes with few read, such as OpenCV 4.6: LSTM and "
      "GRU layers step by step, integers as floats, embeddings as one-hot products "
      "(docs/onnx.md)");
  command->callback([&action, request] { action = [request] { return run_export(*request); }; });
}

}  // namespace kiln::cli
