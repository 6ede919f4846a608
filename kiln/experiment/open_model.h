#pragma once
// A trained model opened from its run folder or one of its checkpoints alone, without reading
// any data: what `kiln eval`, `kiln model summary RUN` and (later) export and serving start
// from. Building a model needs the shape of its examples, which otherwise only the training data
// knows, so every run saves what the model takes (inputs.json: per input, its name, the shape of
// one example and its dtype, as the data delivers it before the eval transforms, and for image
// data how an encoded image becomes it) beside its config and in every checkpoint.
// Thread-safety: functions of their arguments.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/json.h"
#include "kiln/data/dataset.h"
#include "kiln/experiment/experiment_config.h"
#include "kiln/models/model.h"

namespace kiln::experiment {

/// One input of a model: `input` for the models of today, which take one.
struct ModelInput {
  std::string name = "input";
  std::vector<int64_t> shape;  // of one example, without the batch dimension
  torch::Dtype dtype = torch::kFloat32;
  std::optional<io::ImageInput> image;  // how an encoded image becomes it, for image data
  InputLayout layout{};                 // its named parts and indices, for tabular data
};

/// What a model built over `dataset` takes.
std::vector<ModelInput> model_inputs(const data::Dataset& dataset);
/// inputs.json: {"inputs": [{"name": ..., "shape": [...], "dtype": "float32"}]}, with "layout"
/// for tabular inputs, and the class names of the training data's targets as "labels" when it
/// has them.
Json inputs_json(const std::vector<ModelInput>& inputs,
                 const std::vector<std::string>& labels = {});
/// Reads inputs.json's contents; a DataError naming `file` when they do not fit.
std::vector<ModelInput> parse_inputs(const Json& json, const std::string& file);
/// Its labels; none when it has none, a DataError naming `file` when they are not names.
std::vector<std::string> parse_labels(const Json& json, const std::string& file);
/// The first class name `labels` holds twice, or "" when each is there once.
std::string repeated_label(const std::vector<std::string>& labels);

struct OpenedModel {
  std::shared_ptr<models::Model> model;  // in eval mode, on the device asked for
  ExperimentConfig config;               // the run's resolved config (the checkpoint's own copy)
  std::vector<ModelInput> inputs;
  std::vector<std::string> labels;  // the classes' names, when the training data had them
  std::string checkpoint;           // the directory the weights came from
  std::string weights;  // the file: ema.safetensors when the run kept an EMA, else the model's
  /// The run's preprocessing.json (its fitted feature columns); null for other data.
  Json preprocessing;
};

/// Opens `path`, a run folder (its checkpoint `which`: last, best or a path) or a checkpoint
/// directory: builds the model its config describes for the inputs it saved and loads the
/// evaluation weights. A run saved before inputs.json existed falls back to its training data's
/// shape.
OpenedModel open_model(const std::string& path, const std::string& which, torch::Device device);

/// Whether `path` is a checkpoint directory (it holds a MANIFEST) rather than a run folder.
bool is_checkpoint_directory(const std::string& path);

}  // namespace kiln::experiment
