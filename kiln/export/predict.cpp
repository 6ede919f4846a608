#include "kiln/export/predict.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/export/exported_model.h"
#include "kiln/export/exported_servable.h"
#include "kiln/export/predict_inputs.h"
#include "kiln/export/signatures.h"
#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/serving_error.h"
#include "kiln/serving/version_folders.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;
namespace fs = std::filesystem;
namespace {

// The model a source names: a version folder, a model folder's newest version, or a run (or one
// of its checkpoints) exported in memory.
std::shared_ptr<ExportedModel> open_source(const PredictOptions& options) {
  std::string version = ExportedModel::version_folder(options.source);
  if (!version.empty()) return ExportedModel::load(version, torch::kCPU);
  return ExportedModel::from_checkpoint(options.source, options.checkpoint, torch::kCPU);
}

// A CSV field: quoted when it holds a separator, a quote or a line break.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// CSV's header: an output of one value per example is a column, a longer one NAME_0, NAME_1...;
// `file` first for image files.
std::string csv_header(const std::map<std::string, serving::HostTensor>& outputs, bool files) {
  std::string header = files ? "file" : "";
  for (const auto& [name, tensor] : outputs) {
    int64_t per_row = tensor.size() / std::max<int64_t>(1, tensor.shape.front());
    for (int64_t i = 0; i < per_row; ++i)
      header += (header.empty() ? "" : ",") +
                csv_field(per_row == 1 ? name : fmt::format("{}_{}", name, i));
  }
  return header + "\n";
}

std::string csv_row(const std::map<std::string, serving::HostTensor>& outputs, int64_t row) {
  std::string line;
  for (const auto& [name, tensor] : outputs) {
    int64_t per_row = tensor.size() / std::max<int64_t>(1, tensor.shape.front());
    for (int64_t i = row * per_row; i < (row + 1) * per_row; ++i) {
      std::string value =
          tensor.dtype == serving::DType::kString ? csv_field(tensor.strings[i])
          : tensor.dtype == serving::DType::kFloat32 || tensor.dtype == serving::DType::kFloat64
              ? serving::format_float(tensor.numbers[i], tensor.dtype == serving::DType::kFloat32)
              : fmt::format("{}", static_cast<int64_t>(tensor.numbers[i]));
      line += (line.empty() ? "" : ",") + value;
    }
  }
  return line + "\n";
}

}  // namespace

PredictOutcome predict_file(const PredictOptions& options, std::FILE* progress) {
  if (options.format != "jsonl" && options.format != "csv")
    throw UsageError("--format is jsonl or csv, not " + options.format);
  std::shared_ptr<ExportedModel> model = open_source(options);
  if (options.optimize) {
    std::string done = model->optimize_for_inference(options.batch);
    if (progress) std::fprintf(progress, "model optimized for inference: %s\n", done.c_str());
  }
  const serving::Signature* signature = model->signature(options.signature);
  if (!signature) {
    std::string known;
    for (const auto& [name, s] : model->signatures()) known += (known.empty() ? "" : ", ") + name;
    throw UsageError(
        fmt::format("the model has no signature \"{}\"; it has {}", options.signature, known));
  }
  auto start = std::chrono::steady_clock::now();
  PredictInputs read = read_predict_inputs(options.input, model->inputs().front(), model->reader(),
                                           model->preprocessing());
  const torch::Tensor& inputs = read.examples;
  bool files = !read.files.empty();
  std::FILE* out = options.output.empty() ? stdout : std::fopen(options.output.c_str(), "w");
  if (!out) throw IoError("write", options.output, errno);
  PredictOutcome outcome;
  int64_t total = inputs.size(0);
  bool terminal = progress && ::isatty(::fileno(progress));
  for (int64_t begin = 0; begin < total; begin += options.batch) {
    int64_t count = std::min(options.batch, total - begin);
    std::map<std::string, torch::Tensor> outputs;
    {
      c10::InferenceMode inference;
      outputs = model->run(*signature, inputs.narrow(0, begin, count));
    }
    std::map<std::string, serving::HostTensor> host;
    for (const auto& [name, out_spec] : signature->outputs)
      host[name] = model->to_host(out_spec, outputs.at(name));
    if (options.format == "csv" && begin == 0) std::fputs(csv_header(host, files).c_str(), out);
    std::vector<std::string> lines = serving::prediction_rows(host);
    for (int64_t row = 0; row < count; ++row) {
      std::string file = files ? read.files[static_cast<size_t>(begin + row)] : "";
      std::string line = options.format == "csv"
                             ? (files ? csv_field(file) + "," : "") + csv_row(host, row)
                             : (files ? "{\"file\":" + Json(file).dump() + "," +
                                            lines[static_cast<size_t>(row)].substr(1)
                                      : lines[static_cast<size_t>(row)]) +
                                   "\n";
      std::fputs(line.c_str(), out);
    }
    outcome.examples += count;
    if (terminal)
      std::fprintf(progress, "\rpredicted %lld/%lld examples",
                   static_cast<long long>(outcome.examples), static_cast<long long>(total));
  }
  if (out != stdout) std::fclose(out);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress)
    std::fprintf(progress, "%spredicted %lld examples in %.2f s, %.0f examples/s\n",
                 terminal ? "\r" : "", static_cast<long long>(outcome.examples), outcome.seconds,
                 outcome.examples / std::max(outcome.seconds, 1e-9));
  return outcome;
}

}  // namespace kiln::exports
