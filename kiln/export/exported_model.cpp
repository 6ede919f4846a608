#include "kiln/export/exported_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <torch/script.h>

#include <filesystem>

#include "kiln/core/config.h"
#include "kiln/core/input_layout.h"
#include "kiln/core/json_keys.h"
#include "kiln/data/dataset.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/experiment/open_model.h"
#include "kiln/experiment/preprocessing_file.h"
#include "kiln/export/export_format.h"
#include "kiln/export/signatures.h"
#include "kiln/export/version_inputs.h"
#include "kiln/models/allocation_limit.h"
#include "kiln/models/torchscript_file.h"
#include "kiln/serving/version_folders.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace fs = std::filesystem;
namespace {

[[noreturn]] void refuse(const std::string& file, const std::string& problem) {
  throw DataError(file, -1, -1, problem);
}

Json read_model_yaml(const std::string& file) {
  if (!fs::exists(file)) refuse(file, "missing: a version folder holds model.yaml");
  Json yaml;
  try {
    yaml = load_config_file(file);
  } catch (const Error& e) {
    refuse(file, e.what());
  }
  bool known = yaml.is_object() && yaml.contains("format") &&
               (yaml["format"] == kExportFormat || yaml["format"] == kTorchScriptFormat);
  if (!known)
    refuse(file, fmt::format("not a kiln export: `format: {}` expected (or `format: {}` beside a "
                             "TorchScript model.pt)",
                             kExportFormat, kTorchScriptFormat));
  const Json& version = yaml.value("format_version", Json());
  if (!version.is_number_integer() || version.get<int64_t>() < 1 ||
      version.get<int64_t>() > kExportFormatVersion)
    refuse(file,
           fmt::format("format_version {} is not one this kiln reads (1 to {})",
                       show_value(yaml.value("format_version", Json())), kExportFormatVersion));
  for (const char* key : {"inputs", "signatures"})
    if (!yaml.contains(key)) refuse(file, fmt::format("`{}` is missing", key));
  // A misspelt key (`lables`) would be ignored and the version served without what it says.
  std::string unknown = unknown_key_problem(
      yaml,
      {"format", "format_version", "kiln_version", "name", "source", "model", "inputs",
       "transforms", "labels", "embedding_layer", "reader", "signatures"},
      "model.yaml");
  if (!unknown.empty()) refuse(file, unknown);
  unknown = unknown_key_problem(yaml.value("source", Json::object()),
                                {"run", "checkpoint", "step", "weights"}, "its `source`");
  if (!unknown.empty()) refuse(file, unknown);
  if (yaml["format"] == kExportFormat && !yaml.contains("model"))
    refuse(file, "`model` is missing");
  return yaml;
}

// model.yaml's `transforms`, read as a config's are: an unknown component or option is named.
Transforms read_transforms(const Json& yaml) {
  ComponentList transforms("transform");
  OptionTraits<ComponentList>::read(yaml.value("transforms", Json::array()), transforms,
                                    ReadContext{"transforms"});
  return build_transforms(transforms);
}

// The outputs a TorchScript forward gives, by the names signatures' `from` uses: "" for a tensor,
// a dict's keys, a tuple's indices.
models::NamedOutputs torchscript_outputs(const c10::IValue& result, const std::string& file) {
  models::NamedOutputs outputs;
  auto add = [&](const std::string& name, const c10::IValue& value) {
    if (!value.isTensor())
      refuse(file, fmt::format("model.pt's forward gives a {} as output \"{}\"; kiln serves "
                               "tensors",
                               value.tagKind(), name));
    outputs.insert(name, value.toTensor());
  };
  if (result.isTensor()) {
    add("", result);
  } else if (result.isGenericDict()) {
    for (const auto& item : result.toGenericDict()) {
      if (!item.key().isString())
        refuse(file, "model.pt's forward gives a dict whose keys are not text");
      add(item.key().toStringRef(), item.value());
    }
  } else if (result.isTuple()) {
    const auto& elements = result.toTuple()->elements();
    for (size_t i = 0; i < elements.size(); ++i) add(std::to_string(i), elements[i]);
  } else {
    refuse(file, fmt::format("model.pt's forward gives a {}; kiln serves a tensor, a dict of "
                             "tensors or a tuple of tensors",
                             result.tagKind()));
  }
  return outputs;
}

std::vector<std::string> label_list(const Json& yaml, const std::string& file) {
  std::vector<std::string> labels;
  if (!yaml.contains("labels")) return labels;
  if (!yaml["labels"].is_array()) refuse(file, "`labels` is a list of class names");
  for (const Json& label : yaml["labels"]) {
    if (!label.is_string()) refuse(file, "`labels` is a list of class names");
    labels.push_back(label.get<std::string>());
  }
  // Two classes of one name would answer `classes` that cannot be told apart.
  std::string repeated = repeated_label(labels);
  if (!repeated.empty())
    refuse(file, fmt::format("`labels` names the class \"{}\" twice", repeated));
  return labels;
}

// A `layer` output gives the activations of the one layer model.yaml's `embedding_layer` names
// (the run's tensorboard.projector.layer): another name would be taken for that one in silence.
void check_layer_outputs(const serving::Signatures& signatures, const std::string& layer,
                         const std::string& file) {
  for (const auto& [name, signature] : signatures)
    for (const auto& [output, out] : signature.outputs)
      if (out.op == serving::OutputOp::kLayer && out.layer != layer)
        refuse(file, fmt::format("signature {}: output {} gives the layer \"{}\", but this version "
                                 "gives the activations of embedding_layer \"{}\" only",
                                 name, output, out.layer, layer));
}

// The model model.yaml describes, built within what its weights file allows: a layer edited to
// a billion wide is refused before it is allocated.
std::shared_ptr<models::Model> build_described(const ComponentSpec& network,
                                               const ModelInput& input,
                                               const Transforms& transforms,
                                               const std::string& directory) {
  models::AllocationLimit limit(models::build_allowance(directory + "/model.safetensors"),
                                directory + "/model.yaml", "building the model it describes");
  return models::build_model(
      network, model_inputs_after(transforms, input.shape, input.dtype, input.layout));
}

}  // namespace

bool ExportedModel::is_version(const std::string& directory) {
  return fs::exists(directory + "/model.yaml");
}

std::string ExportedModel::version_folder(const std::string& location) {
  if (is_version(location)) return location;
  if (fs::exists(location + "/config.yaml")) return "";  // a run folder
  std::vector<int64_t> versions = serving::list_versions(location);
  return versions.empty() ? "" : fmt::format("{}/{}", location, versions.back());
}

std::shared_ptr<ExportedModel> ExportedModel::load(const std::string& directory,
                                                   torch::Device device) {
  std::string file = directory + "/model.yaml";
  Json yaml = read_model_yaml(file);
  // Version folders of format_version 2 on list their files' checksums; a damaged or altered
  // file is refused before anything is read from it.
  if (yaml["format_version"].get<int64_t>() >= 2 || fs::exists(directory + "/MANIFEST"))
    engine::verify_manifest(directory, "version folder");
  std::shared_ptr<ExportedModel> loaded(new ExportedModel());
  loaded->directory_ = directory;
  loaded->device_ = device;
  loaded->name_ = yaml.contains("name") && yaml["name"].is_string()
                      ? yaml["name"].get<std::string>()
                      : fs::path(directory).parent_path().filename().string();
  loaded->inputs_ = parse_inputs(Json{{"inputs", yaml["inputs"]}}, file);
  loaded->labels_ = label_list(yaml, file);
  loaded->signatures_ = serving::parse_signatures(yaml["signatures"], file);
  loaded->reader_ = yaml.value("reader", Json());
  loaded->preprocessing_ = read_preprocessing(directory);
  // The reader first: the columns are compared with the lists it was checked to hold.
  if (!loaded->reader_.is_null()) check_reader(loaded->reader_, file);
  check_preprocessing(loaded->inputs_.front(), loaded->preprocessing_, loaded->reader_, directory);
  if (yaml["format"] == kTorchScriptFormat) {
    try {
      loaded->transforms_ = read_transforms(yaml);
    } catch (const Error& e) {
      refuse(file, e.what());
    }
    loaded->load_torchscript(directory, file);
    loaded->check_signatures(file);
    return loaded;
  }
  try {
    // Read as a config's are: an unknown component or option is named, not a crash.
    ComponentSpec network("model");
    OptionTraits<ComponentSpec>::read(yaml["model"], network, ReadContext{"model"});
    loaded->transforms_ = read_transforms(yaml);
    loaded->model_ =
        build_described(network, loaded->inputs_.front(), loaded->transforms_, directory);
    const Json& layer = yaml.value("embedding_layer", Json(""));
    if (!layer.is_string()) refuse(file, "`embedding_layer` is a layer's dotted name");
    loaded->embedding_.emplace(*loaded->model_, layer.get<std::string>(), "embedding_layer");
    loaded->network_ = network;
    loaded->embedding_layer_ = layer.get<std::string>();
    loaded->embedding_path_ = "embedding_layer";
    check_layer_outputs(loaded->signatures_, layer.get<std::string>(), file);
  } catch (const DataError&) {
    throw;
  } catch (const Error& e) {  // a component this kiln lacks, an option it refuses
    refuse(file, e.what());
  }
  engine::copy_weights_from(directory + "/model.safetensors", *loaded->model_);
  loaded->model_->to(device);
  loaded->model_->eval();
  loaded->check_signatures(file);
  return loaded;
}

std::shared_ptr<ExportedModel> ExportedModel::from_checkpoint(const std::string& source,
                                                              const std::string& which,
                                                              torch::Device device) {
  return from_opened(open_model(source, which, device));
}

std::shared_ptr<ExportedModel> ExportedModel::from_opened(const OpenedModel& opened) {
  std::shared_ptr<ExportedModel> made(new ExportedModel());
  made->directory_ = opened.checkpoint;
  made->device_ = opened.model->parameters().empty() ? torch::Device(torch::kCPU)
                                                     : opened.model->parameters().front().device();
  made->name_ = opened.config.name;
  made->inputs_ = opened.inputs;
  made->labels_ = opened.labels;
  made->reader_ = evaluation_data_spec(opened.config);
  made->preprocessing_ = opened.preprocessing;
  made->model_ = opened.model;
  made->transforms_ = eval_transforms(opened.config);
  made->embedding_.emplace(*made->model_, opened.config.tensorboard.projector.layer,
                           "tensorboard.projector.layer");
  made->network_ = opened.config.model.network;
  made->embedding_layer_ = opened.config.tensorboard.projector.layer;
  made->embedding_path_ = "tensorboard.projector.layer";
  made->signatures_ = derive_signatures(*made->model_, made->inputs_, made->transforms_,
                                        opened.config.loss, *made->embedding_);
  return made;
}

void ExportedModel::load_torchscript(const std::string& directory, const std::string& file) {
  for (const auto& [name, signature] : signatures_)
    for (const auto& [output, out] : signature.outputs)
      if (out.op == serving::OutputOp::kLayer)
        refuse(file, fmt::format("signature {}: output {} is a layer's activations, which a "
                                 "TorchScript model does not expose; return them from forward",
                                 name, output));
  std::string path = directory + "/model.pt";
  if (!fs::exists(path))
    refuse(path, "missing: a TorchScript version folder holds model.pt (from torch.jit.save)");
  torchscript_ = std::make_shared<torch::jit::Module>(models::read_torchscript(path, device_));
  torchscript_->eval();
}

std::map<std::string, torch::Tensor> ExportedModel::run_torchscript(
    const serving::Signature& signature, const torch::Tensor& input) {
  torch::NoGradGuard no_grad;
  torch::Tensor batch = input;
  for (const auto& transform : transforms_) batch = transform->apply(batch);
  c10::IValue result = torchscript_->forward({batch});
  return signature_outputs(signature, torchscript_outputs(result, directory_ + "/model.pt"),
                           torch::Tensor());
}

void ExportedModel::check_signatures(const std::string& file) {
  // Each signature runs once on an example of zeros, so that a model.yaml whose outputs the model
  // does not give is refused when it loads, not at its first request.
  std::vector<int64_t> example = {1};
  example.insert(example.end(), inputs_.front().shape.begin(), inputs_.front().shape.end());
  torch::Tensor zeros = torch::zeros(example, torch::TensorOptions().dtype(inputs_.front().dtype));
  const ModelInput& input = inputs_.front();
  std::vector<int64_t> batch_shape = {-1};
  batch_shape.insert(batch_shape.end(), input.shape.begin(), input.shape.end());
  for (const auto& [name, signature] : signatures_) {
    if (signature.inputs.size() != 1 || !signature.inputs.count(input.name))
      refuse(file,
             fmt::format("signature {} must take the model's one input, \"{}\"", name, input.name));
    // What a client is told to send must be what the model takes: a version that declares
    // otherwise loads, then answers every request with an error.
    const serving::TensorSpec& declared = signature.inputs.at(input.name);
    if (declared.shape != batch_shape || declared.dtype != serving_dtype(input.dtype))
      refuse(file, fmt::format("signature {}: input {} is declared {} [{}], but the model takes "
                               "{} [{}] (`inputs`)",
                               name, input.name, serving::dtype_name(declared.dtype),
                               fmt::join(declared.shape, ", "),
                               serving::dtype_name(serving_dtype(input.dtype)),
                               fmt::join(batch_shape, ", ")));
    check_labels(name, signature, zeros, file);
    std::map<std::string, torch::Tensor> outputs;
    try {
      outputs = run(signature, zeros);
    } catch (const c10::Error& e) {
      refuse(file, fmt::format("signature {} does not run: {}", name, e.what_without_backtrace()));
    } catch (const DataError&) {
      throw;
    } catch (const Error& e) {  // an output from a model output that the model does not give
      refuse(file, fmt::format("signature {}: {}", name, e.what()));
    }
    for (const auto& [output, out] : signature.outputs) {
      const torch::Tensor& value = outputs[output];
      bool fits = value.defined() && value.dim() == int64_t(out.spec.shape.size());
      for (size_t d = 1; fits && d < out.spec.shape.size(); ++d)
        fits = out.spec.shape[d] == -1 || out.spec.shape[d] == value.size(d);
      if (!fits)
        refuse(file, fmt::format("signature {}: output {} is declared [{}] but the model gives {}",
                                 name, output, fmt::join(out.spec.shape, ", "),
                                 value.defined() ? c10::str(value.sizes()) : "nothing"));
      // Finite weights can still overflow (every weight 3e38): such a version answers inf and
      // NaN to every request. (A TorchScript model's own arithmetic may give inf on zeros.)
      if (!torchscript_ && value.is_floating_point() && !torch::isfinite(value).all().item<bool>())
        refuse(file, fmt::format("signature {}: output {} is not finite (inf or NaN) for an "
                                 "example of zeros; are the weights damaged?",
                                 name, output));
    }
  }
}

// Labels name the classes an argmax_label output picks from: as many as the output it takes the
// argmax of has scores, or a class id past the list would be answered by its number.
void ExportedModel::check_labels(const std::string& name, const serving::Signature& signature,
                                 const torch::Tensor& example, const std::string& file) {
  if (labels_.empty()) return;
  for (const auto& [output, out] : signature.outputs) {
    if (out.op != serving::OutputOp::kArgmaxLabel) continue;
    serving::Signature scores;
    scores.inputs = signature.inputs;
    scores.outputs["scores"] = {
        {serving::DType::kFloat32, {-1, -1}}, out.from, serving::OutputOp::kIdentity, ""};
    torch::Tensor value;
    try {
      value = run(scores, example).at("scores");
    } catch (const std::exception&) {
      continue;  // the signature's own run reports what is wrong with it
    }
    if (value.dim() != 2 || value.size(1) != int64_t(labels_.size()))
      refuse(file, fmt::format("signature {}: output {} picks from {} classes, but `labels` names "
                               "{}",
                               name, output, value.dim() == 2 ? value.size(1) : 0, labels_.size()));
  }
}

const serving::Signature* ExportedModel::signature(const std::string& name) const {
  auto found = signatures_.find(name);
  return found == signatures_.end() ? nullptr : &found->second;
}

std::map<std::string, torch::Tensor> ExportedModel::run(const serving::Signature& signature,
                                                        const torch::Tensor& input) {
  if (torchscript_) return run_torchscript(signature, input.to(device_));
  return run_signature(*model_, signature, transforms_, *embedding_, input.to(device_));
}

serving::HostTensor ExportedModel::to_host(const serving::SignatureOutput& output,
                                           const torch::Tensor& value) const {
  serving::HostTensor host;
  host.dtype = output.spec.dtype;
  host.shape.assign(value.sizes().begin(), value.sizes().end());
  torch::Tensor flat = value.detach().to(torch::kCPU).contiguous().reshape({-1});
  if (output.op == serving::OutputOp::kArgmaxLabel) {
    auto ids = flat.to(torch::kInt64);
    for (int64_t i = 0; i < ids.numel(); ++i) {
      int64_t id = ids[i].item<int64_t>();
      host.strings.push_back(id >= 0 && id < int64_t(labels_.size()) ? labels_[id]
                                                                     : std::to_string(id));
    }
    return host;
  }
  torch::Tensor numbers = flat.to(torch::kFloat64);
  const double* data = numbers.data_ptr<double>();
  host.numbers.assign(data, data + numbers.numel());
  return host;
}

}  // namespace kiln::exports
