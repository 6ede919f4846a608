#include "kiln/experiment/open_model.h"

#include <filesystem>
#include <set>

#include "kiln/core/config.h"
#include "kiln/core/json_keys.h"
#include "kiln/core/json_text.h"
#include "kiln/core/text_file.h"
#include "kiln/data/dtype_names.h"
#include "kiln/engine/checkpoint.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/preprocessing_file.h"
#include "kiln/models/allocation_limit.h"
#include "kiln/run/run_directory.h"

namespace kiln::experiment {

namespace fs = std::filesystem;
namespace {

ModelInput parse_input(const Json& item, const std::string& file) {
  auto fail = [&](const std::string& problem) -> ModelInput {
    throw DataError(file, -1, -1, "inputs.json: " + problem + ", in " + show_value(item));
  };
  auto is_text = [&](const char* key) { return !item.contains(key) || item[key].is_string(); };
  if (!item.is_object() || !item.contains("shape") || !item["shape"].is_array() ||
      !is_text("name") || !is_text("dtype"))
    return fail("each input needs a name, a shape (a list of sizes) and a dtype");
  std::string unknown =
      unknown_key_problem(item, {"name", "shape", "dtype", "image", "layout"}, "an input");
  if (!unknown.empty()) return fail(unknown);
  // An example is built from this shape before any data is seen: bound it, so that a damaged
  // file is an error rather than an allocation of petabytes.
  constexpr size_t kMaxRank = 8;
  constexpr int64_t kMaxElements = int64_t{1} << 31;
  ModelInput input;
  input.name = item.value("name", "input");
  int64_t elements = 1;
  for (const Json& size : item["shape"]) {
    if (!size.is_number_integer() || size.get<int64_t>() <= 0 ||
        size.get<int64_t>() > kMaxElements / elements)
      return fail(fmt::format("a shape holds positive sizes, {} elements at most", kMaxElements));
    elements *= size.get<int64_t>();
    input.shape.push_back(size.get<int64_t>());
  }
  if (input.shape.size() > kMaxRank)
    return fail(fmt::format("a shape has at most {} dimensions", kMaxRank));
  std::string dtype = item.value("dtype", "float32");
  std::optional<torch::Dtype> type = data::dtype_named(dtype);
  if (!type) return fail("unknown dtype \"" + dtype + "\"");
  input.dtype = *type;
  if (item.contains("image")) {
    input.image = io::parse_image_input(item["image"], file);
    if (input.image->shape() != input.shape)
      return fail("the image's channels, height and width do not make the input's shape");
  }
  if (item.contains("layout")) {
    if (input.shape.size() != 1) return fail("a layout describes a row: a shape of one size");
    try {
      input.layout = parse_layout(item["layout"], input.shape[0], file);
    } catch (const ConfigError& e) {
      return fail(e.problem());
    }
  }
  return input;
}

// inputs.json as saved with the checkpoint, else with the run; null when neither saved it.
Json saved_inputs_json(const std::string& checkpoint, const std::string& run, std::string& file) {
  for (const std::string& dir : {checkpoint, run}) {
    file = dir + "/inputs.json";
    if (dir.empty() || !fs::exists(file)) continue;
    return read_json_file(file);
  }
  return nullptr;
}

// The preprocessing.json of the run `checkpoint` belongs to (kept in the run folder, two levels
// above its checkpoints); null when the run has none.
Json saved_preprocessing(const std::string& checkpoint, const std::string& run) {
  std::string owner = run.empty() ? fs::path(checkpoint).parent_path().parent_path().string() : run;
  for (const std::string& dir : {checkpoint, owner}) {
    Json saved = dir.empty() ? Json() : read_preprocessing(dir);
    if (!saved.is_null()) return saved;
  }
  return nullptr;
}

// A model written in PyTorch is built from the run's copy of its module, whatever file its
// config named where it trained (which may have changed or gone since).
void use_run_module(ComponentSpec& network, const std::string& checkpoint, const std::string& run) {
  if (network.type() != "torchscript") return;
  std::string owner = run.empty() ? fs::path(checkpoint).parent_path().parent_path().string() : run;
  network.spec["file"] = (fs::path(owner) / run::kModuleFile).string();
}

}  // namespace

std::vector<ModelInput> model_inputs(const data::Dataset& dataset) {
  data::DatasetInfo info = dataset.info();
  return {ModelInput{"input", dataset.input_shape(), dataset.input_dtype(), info.image_input,
                     info.input_layout}};
}

Json inputs_json(const std::vector<ModelInput>& inputs, const std::vector<std::string>& labels) {
  Json list = Json::array();
  for (const ModelInput& input : inputs) {
    Json item = {
        {"name", input.name}, {"shape", input.shape}, {"dtype", data::dtype_name(input.dtype)}};
    if (input.image) item["image"] = io::image_input_json(*input.image);
    if (!input.layout.empty()) item["layout"] = layout_json(input.layout);
    list.push_back(item);
  }
  Json json = {{"inputs", list}};
  if (!labels.empty()) json["labels"] = labels;
  return json;
}

std::vector<std::string> parse_labels(const Json& json, const std::string& file) {
  std::vector<std::string> labels;
  if (!json.is_object() || !json.contains("labels")) return labels;
  const Json& list = json["labels"];
  bool names = list.is_array();
  for (size_t i = 0; names && i < list.size(); ++i) names = list[i].is_string();
  if (!names)
    throw DataError(file, -1, -1,
                    "inputs.json: labels is a list of names, not " + show_value(list));
  for (const Json& label : list) labels.push_back(label.get<std::string>());
  std::string repeated = repeated_label(labels);
  if (!repeated.empty())
    throw DataError(file, -1, -1,
                    fmt::format("inputs.json: labels names the class \"{}\" twice", repeated));
  return labels;
}

std::string repeated_label(const std::vector<std::string>& labels) {
  std::set<std::string> seen;
  for (const std::string& label : labels)
    if (!seen.insert(label).second) return label;
  return "";
}

std::vector<ModelInput> parse_inputs(const Json& json, const std::string& file) {
  if (!json.is_object() || !json.contains("inputs") || !json["inputs"].is_array() ||
      json["inputs"].size() != 1)
    throw DataError(file, -1, -1,
                    "inputs.json: expected {\"inputs\": [one input]}, got " + show_value(json));
  return {parse_input(json["inputs"][0], file)};
}

bool is_checkpoint_directory(const std::string& path) { return fs::exists(path + "/MANIFEST"); }

OpenedModel open_model(const std::string& path, const std::string& which, torch::Device device) {
  OpenedModel opened;
  std::string run;
  if (is_checkpoint_directory(path)) {
    engine::verify_checkpoint(path);
    opened.checkpoint = path;
  } else {
    run = run::RunDirectory::open(path).path();
    opened.checkpoint = engine::find_checkpoint(run, which);
  }
  opened.config = parse_experiment(load_config({opened.checkpoint + "/config.yaml"}, {}));
  std::string file;
  Json saved = saved_inputs_json(opened.checkpoint, run, file);
  if (!saved.is_null()) {
    opened.inputs = parse_inputs(saved, file);
    opened.labels = parse_labels(saved, file);
  } else {
    // A run saved before inputs.json: its training data knows the shape.
    Experiment experiment(opened.config, device);
    opened.inputs = model_inputs(*experiment.dataset("train"));
  }
  const ModelInput& input = opened.inputs.front();
  use_run_module(opened.config.model.network, opened.checkpoint, run);
  {
    models::AllocationLimit limit(models::build_allowance(opened.checkpoint + "/model.safetensors"),
                                  opened.checkpoint + "/config.yaml",
                                  "building the model it describes");
    opened.model = models::build_model(
        opened.config.model.network,
        model_inputs_after(eval_transforms(opened.config), input.shape, input.dtype, input.layout));
  }
  opened.model->to(device);
  opened.weights = engine::load_evaluation_weights(opened.checkpoint, *opened.model);
  opened.model->eval();
  opened.preprocessing = saved_preprocessing(opened.checkpoint, run);
  return opened;
}

}  // namespace kiln::experiment
