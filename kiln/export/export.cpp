#include "kiln/export/export.h"

#include <fmt/format.h>

#include <filesystem>

#include "kiln/core/config.h"
#include "kiln/core/remove_tree.h"
#include "kiln/core/text_file.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/experiment/open_model.h"
#include "kiln/export/exported_model.h"
#include "kiln/export/onnx/onnx_writer.h"
#include "kiln/io/manifest.h"
#include "kiln/models/torchscript_file.h"
#include "kiln/models/torchscript_model.h"
#include "kiln/serving/version_folders.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace fs = std::filesystem;
namespace {

using Files = std::vector<std::pair<std::string, std::string>>;  // name, bytes

// The run a checkpoint directory (RUN/checkpoints/step-N) belongs to.
std::string run_of(const std::string& checkpoint) {
  return fs::absolute(checkpoint).lexically_normal().parent_path().parent_path().string();
}

Json specs_json(const ComponentList& list) {
  Json specs = Json::array();
  for (const auto& item : list.items) specs.push_back(item.spec);
  return specs;
}

Json model_yaml(const OpenedModel& opened, const std::string& name, const std::string& checkpoint,
                const serving::Signatures& signatures) {
  const experiment::ExperimentConfig& config = opened.config;
  Json yaml = Json::object();
  yaml["format"] = kExportFormat;
  yaml["format_version"] = kExportFormatVersion;
  yaml["kiln_version"] = KILN_VERSION;
  yaml["name"] = name;
  yaml["source"] = {{"run", run_of(checkpoint)},
                    {"checkpoint", fs::path(checkpoint).filename().string()},
                    {"step", engine::checkpoint_step(checkpoint)},
                    {"weights", fs::path(opened.weights).filename().string()}};
  yaml["model"] = config.model.network.spec;
  yaml["inputs"] = inputs_json(opened.inputs)["inputs"];
  yaml["transforms"] = specs_json(config.data.transforms.eval);
  if (!opened.labels.empty()) yaml["labels"] = opened.labels;
  yaml["embedding_layer"] = config.tensorboard.projector.layer;
  // How `kiln predict` reads TFRecord and CSV files for this model: as its data was read.
  Json reader = evaluation_data_spec(config);
  if (!reader.is_null()) yaml["reader"] = reader;
  yaml["signatures"] = serving::signatures_json(signatures);
  return yaml;
}

// A version's model.yaml and weights; a model written in PyTorch is served as one: its scripted
// module, holding the trained weights, as model.pt.
Files model_files(const OpenedModel& opened, Json yaml, const ExportRequest& request,
                  const std::string& checkpoint) {
  Files contents;
  if (models::TorchScriptModel* scripted = models::as_torchscript(*opened.model)) {
    if (request.format != "kiln")
      throw Error(
          fmt::format("{} is a model written in PyTorch, exported as TorchScript "
                      "(model.pt): --format {} needs a model of kiln's layers",
                      checkpoint, request.format));
    yaml["format"] = kTorchScriptFormat;
    yaml.erase("model");
    yaml.erase("embedding_layer");
    // A served TorchScript model's one tensor is the output `from: ""`, whatever its name.
    for (auto& [signature, described] : yaml["signatures"].items())
      for (auto& [output, out] : described["outputs"].items())
        if (out.value("from", "") == scripted->output_name()) out.erase("from");
    contents.emplace_back("model.pt", models::torchscript_bytes(scripted->scripted()));
  } else {
    contents.emplace_back("model.safetensors", engine::serialize_weights(*opened.model));
  }
  contents.emplace_back("model.yaml", to_yaml(yaml));
  return contents;
}

}  // namespace

const std::vector<std::string>& export_formats() {
  static const std::vector<std::string> formats = {"kiln", "onnx"};
  return formats;
}

ExportedVersion export_model(const ExportRequest& request) {
  ExportedVersion exported;
  exported.checkpoint = is_checkpoint_directory(request.source)
                            ? request.source
                            : engine::find_checkpoint(request.source, request.checkpoint);
  OpenedModel opened = open_model(exported.checkpoint, "", torch::kCPU);
  exported.weights = opened.weights;
  std::string name = request.name.empty() ? opened.config.name : request.name;
  std::string to = request.to.empty() ? run_of(exported.checkpoint) + "/export" : request.to;
  exported.base = to + "/" + name;

  std::shared_ptr<ExportedModel> runnable = ExportedModel::from_opened(opened);
  serving::Signatures signatures = runnable->signatures();
  std::vector<std::pair<std::string, std::string>> contents =
      model_files(opened, model_yaml(opened, name, exported.checkpoint, signatures), request,
                  exported.checkpoint);
  if (request.portable && request.format != "onnx")
    throw Error("--portable writes model.onnx: give --format onnx too");
  if (request.format == "onnx")
    contents.emplace_back("model.onnx",
                          to_onnx(*runnable, "serving_default", request.portable).bytes);
  else if (request.format != "kiln")
    throw Error(fmt::format("export format \"{}\" is not one of kiln, onnx", request.format));
  std::string staging = serving::staging_folder(exported.base);
  try {
    // The fitted feature columns go with the model: serving writes its inputs as training did.
    if (!opened.preprocessing.is_null())
      contents.emplace_back("preprocessing.json", opened.preprocessing.dump(2) + "\n");
    // Checksums of every file, verified when the version loads (format_version 2 on).
    std::string manifest;
    engine::CheckpointFileSystem& files = engine::real_file_system();
    for (const auto& [file, bytes] : contents) {
      files.write(staging + "/" + file, bytes);
      manifest += io::manifest_line(file, bytes);
    }
    files.write(staging + "/MANIFEST", manifest);
    files.sync_directory(staging);
    exported.version = serving::publish_version(exported.base, staging);
  } catch (...) {
    std::error_code ignored;
    remove_tree(staging, ignored);
    throw;
  }
  exported.directory = fmt::format("{}/{}", exported.base, exported.version);
  return exported;
}

}  // namespace kiln::exports
