#include "kiln/export/predict_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <optional>

#include "kiln/core/error.h"
#include "kiln/core/line_reader.h"
#include "kiln/data/columns_dataset.h"
#include "kiln/data/dataset.h"
#include "kiln/data/idx_tensors.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/export/columns_example_encoder.h"
#include "kiln/export/exported_servable.h"
#include "kiln/export/signatures.h"
#include "kiln/io/csv.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/idx.h"
#include "kiln/io/image_folder.h"
#include "kiln/io/image_input.h"
#include "kiln/serving/batcher.h"
#include "kiln/serving/rest/example_request.h"
#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/serving_error.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;
namespace fs = std::filesystem;
namespace {

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The longest line of a JSON lines input: one instance (an image as base64 included), four times
// what `kiln serve` takes in a whole request by default.
constexpr size_t kMaxJsonLineBytes = size_t{64} << 20;

// Every line of a JSON lines file, each one instance as a row-form request holds it: for a model
// trained on feature columns (`preprocessing`), an object of raw features as kiln serve takes it.
torch::Tensor read_json_lines(const std::string& path, const ModelInput& input,
                              const Json& preprocessing) {
  LineReader in(path, kMaxJsonLineBytes);
  std::vector<int64_t> shape = {-1};
  shape.insert(shape.end(), input.shape.begin(), input.shape.end());
  std::map<std::string, serving::TensorSpec> spec = {
      {input.name, {serving_dtype(input.dtype), shape, input.image}}};
  std::unique_ptr<ColumnsExampleEncoder> encoder;
  if (!preprocessing.is_null())
    encoder = std::make_unique<ColumnsExampleEncoder>(columns_for_input(preprocessing, input, path),
                                                      input.name);
  std::vector<serving::PredictRequest> rows;
  std::string line;
  while (in.next(line)) {
    int64_t number = in.number();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string body = "{\"instances\": [" + line + "]}";
    try {
      std::optional<serving::ExamplesRequest> features =
          encoder ? serving::parse_feature_predict_request(body, encoder->features(), {input.name})
                  : std::nullopt;
      if (features) {
        rows.push_back({});
        rows.back().inputs = encoder->encode(features->examples);
        continue;
      }
      rows.push_back(serving::parse_predict_request(body, spec));
    } catch (const serving::ServingError& e) {
      throw DataError(path, number, -1, fmt::format("line {}: {}", number, e.what()));
    }
  }
  if (rows.empty()) throw DataError(path, -1, -1, "holds no examples");
  std::vector<const std::map<std::string, serving::HostTensor>*> parts;
  for (const auto& row : rows) parts.push_back(&row.inputs);
  return host_to_tensor(serving::concatenate(parts).at(input.name), input.dtype, input.name);
}

// IDX images, scaled to [0, 1] as the idx and fashion_mnist datasets deliver them.
torch::Tensor read_idx_images(const std::string& path, const ModelInput& input) {
  torch::Tensor images = data::idx_images(io::read_idx(path), path);
  std::vector<int64_t> example(images.sizes().begin() + 1, images.sizes().end());
  if (example != input.shape)
    throw DataError(path, -1, -1,
                    fmt::format("holds images of shape [{}]; the model takes [{}]",
                                fmt::join(example, ", "), fmt::join(input.shape, ", ")));
  return images;
}

// An image file, or a folder's image files in sorted order.
std::vector<std::string> image_files(const std::string& path) {
  if (!fs::is_directory(path)) return {path};
  std::vector<std::string> files = io::image_files_in(path);
  if (files.empty()) throw DataError(path, -1, -1, "holds no .png, .jpg or .jpeg files");
  return files;
}

// PNG or JPEG files, decoded as the model's training data decoded its images.
torch::Tensor read_images(const std::vector<std::string>& files, const ModelInput& input) {
  if (!input.image)
    throw UsageError(fmt::format(
        "the model's input \"{}\" was not trained on images (its data had no image input), so "
        "it takes no image files; give JSON lines or IDX",
        input.name));
  serving::HostTensor host;
  host.shape = {static_cast<int64_t>(files.size())};
  host.shape.insert(host.shape.end(), input.shape.begin(), input.shape.end());
  for (const std::string& file : files) {
    std::vector<double> values =
        io::image_input_values(io::read_file_bytes(file), *input.image, file);
    host.numbers.insert(host.numbers.end(), values.begin(), values.end());
  }
  return host_to_tensor(host, input.dtype, input.name);
}

// An option of the dataset spec the model read its examples with (model.yaml's `reader`, which
// may have been edited by hand): `fallback` when absent, a DataError when of another type.
template <class T>
T reader_option(const Json& spec, const char* key, T fallback) {
  const Json& value = spec.value(key, Json());
  if (value.is_null()) return fallback;
  try {
    return value.get<T>();
  } catch (const Json::exception&) {
    throw DataError(
        "model.yaml", -1, -1,
        fmt::format("reader.{} is {}, not what the dataset takes there", key, show_value(value)));
  }
}

// The dataset spec the model read its examples with, checked to be of `type`.
Json reader_of(const Json& reader, const std::string& type, const std::string& path) {
  std::string trained_on = reader.is_object() ? reader_option<std::string>(reader, "type", "") : "";
  if (trained_on != type)
    throw UsageError(fmt::format(
        "{} is a {} file, but the model was trained on {} data, which says nothing of how to read "
        "one; give JSON lines (one instance per line){}",
        path, type == "tfrecord" ? "TFRecord" : "CSV",
        trained_on.empty() ? "unrecorded" : "`" + trained_on + "`",
        trained_on == "tfrecord" ? ", or a .tfrecord file"
        : trained_on == "csv"    ? ", or a .csv file"
                                 : ""));
  return reader;
}

// The records of a tabular dataset written into input rows by the columns the run fitted: the
// rows its training wrote for the same records.
torch::Tensor tabular_rows(const std::string& path, std::shared_ptr<data::Dataset> records,
                           const ModelInput& input, const Json& preprocessing) {
  if (preprocessing.is_null())
    throw UsageError(path +
                     ": the model reads feature columns, but its run or export has no "
                     "preprocessing.json to write them with");
  data::ColumnsDataset rows(std::move(records), columns_for_input(preprocessing, input, path));
  if (rows.size() == 0) throw DataError(path, -1, -1, "holds no records");
  return rows.gather(torch::arange(rows.size(), torch::kInt64)).input;
}

// The derived features the model's columns read (data.derived, kept in preprocessing.json),
// computed as training computed them; not a derived label, which records to predict may lack
// the features of.
Json derived_inputs(const Json& preprocessing) {
  if (!preprocessing.is_object() || !preprocessing.contains("derived")) return Json::object();
  return tabular::FeatureColumns::from_preprocessing(preprocessing)->derived_inputs().json();
}

// The dataset `spec` names, for `path`; a spec that no longer builds is a UsageError.
std::shared_ptr<data::Dataset> dataset_for(const std::string& path, const Json& spec) {
  try {
    return data::dataset_registry().create(ComponentSpec("dataset", spec));
  } catch (const ConfigError& e) {
    throw UsageError(fmt::format("{}: the model's {} spec does not read it: {}", path,
                                 reader_option<std::string>(spec, "type", ""), e.what()));
  }
}

// TFRecord files read as the model's tfrecord dataset read its own: the same features, input
// and layout; the target features default to 0, as records to predict may have no label.
torch::Tensor read_tfrecord(const std::string& path, const ModelInput& input, Json spec,
                            const Json& preprocessing) {
  spec["files"] = Json::array({path});
  spec["cache"] = "records";
  spec.erase("limit");
  spec["derived"] = derived_inputs(preprocessing);
  const Json& target = spec.value("target", Json("label"));
  std::vector<std::string> targets = {target.is_string() ? target.get<std::string>() : "label"};
  if (spec.contains("targets") && spec["targets"].is_array())
    for (const Json& name : spec["targets"])
      if (name.is_string()) targets.push_back(name.get<std::string>());
  for (const char* list : {"features", "sequence_features"})
    for (const std::string& name : targets)
      if (spec.contains(list) && spec[list].contains(name) && spec[list][name].is_object() &&
          spec[list][name].value("default", Json()).is_null())
        spec[list][name]["default"] = 0;
  std::shared_ptr<data::Dataset> dataset = dataset_for(path, spec);
  if (dataset->as_tabular()) return tabular_rows(path, dataset, input, preprocessing);
  if (dataset->size() == 0) throw DataError(path, -1, -1, "holds no records");
  std::vector<int64_t> example = dataset->input_shape();
  if (example != input.shape)
    throw DataError(path, -1, -1,
                    fmt::format("its feature gives examples of shape [{}]; the model takes [{}]",
                                fmt::join(example, ", "), fmt::join(input.shape, ", ")));
  return dataset->gather(torch::arange(dataset->size(), torch::kInt64)).input.to(input.dtype);
}

// CSV rows through the model's feature columns, read by its csv dataset; a file without the
// target column is read with targets of 0.
torch::Tensor read_csv_records(const std::string& path, const ModelInput& input, Json spec,
                               const Json& preprocessing) {
  spec["file"] = path;
  spec["target_default"] = 0;
  spec["derived"] = derived_inputs(preprocessing);
  return tabular_rows(path, dataset_for(path, spec), input, preprocessing);
}

// CSV rows as the model's csv dataset read its own: its feature columns by name (all but the
// target when it named none), empty cells as its fill_missing says. Windows of rows are not read.
torch::Tensor read_csv_rows(const std::string& path, const ModelInput& input, const Json& spec,
                            const Json& preprocessing) {
  auto given = [&](const char* key) { return spec.contains(key) && !spec[key].empty(); };
  if (given("input") || given("inputs")) return read_csv_records(path, input, spec, preprocessing);
  if (reader_option<int64_t>(spec, "window", 0) != 0)
    throw UsageError(path +
                     ": the model reads windows of CSV rows (a time series); give its "
                     "examples as JSON lines");
  std::string delimiter = reader_option<std::string>(spec, "delimiter", ",");
  io::CsvTable table = io::read_csv(path, delimiter.empty() ? ',' : delimiter[0]);
  std::vector<size_t> columns;
  if (spec.contains("features") && spec["features"].is_array() && !spec["features"].empty()) {
    for (const Json& name : spec["features"]) {
      if (!name.is_string())
        throw DataError("model.yaml", -1, -1, "reader.features lists " + show_value(name));
      columns.push_back(table.column(name.get<std::string>()));
    }
  } else {
    std::string target = reader_option<std::string>(spec, "target", "");
    for (size_t c = 0; c < table.header.size(); ++c)
      if (table.header[c] != target) columns.push_back(c);
  }
  if (std::vector<int64_t>{static_cast<int64_t>(columns.size())} != input.shape)
    throw DataError(path, -1, -1,
                    fmt::format("gives {} feature columns; the model takes [{}]", columns.size(),
                                fmt::join(input.shape, ", ")));
  if (table.rows.empty()) throw DataError(path, -1, -1, "holds no rows");
  Json fill = spec.value("fill_missing", Json());
  serving::HostTensor host;
  host.shape = {static_cast<int64_t>(table.rows.size()), static_cast<int64_t>(columns.size())};
  for (size_t row = 0; row < table.rows.size(); ++row)
    for (size_t column : columns) {
      const std::string& cell = table.rows[row][column];
      double value = 0;
      if (cell.empty() && fill.is_number())
        value = fill.get<double>();
      else if (!io::parse_double(cell, value))
        throw DataError(path, static_cast<int64_t>(row), table.row_offsets[row],
                        fmt::format("column \"{}\": {}", table.header[column],
                                    cell.empty() ? "empty cell, and the model's data had no "
                                                   "fill_missing"
                                                 : "\"" + cell + "\" is not a number"));
      host.numbers.push_back(value);
    }
  return host_to_tensor(host, input.dtype, input.name);
}

bool is_csv(const std::string& path) {
  return ends_with(path, ".csv") || ends_with(path, ".csv.gz");
}

}  // namespace

PredictInputs read_predict_inputs(const std::string& path, const ModelInput& input,
                                  const Json& reader, const Json& preprocessing) {
  if (ends_with(path, ".jsonl") || ends_with(path, ".json"))
    return {read_json_lines(path, input, preprocessing), {}};
  if (fs::is_directory(path) || io::is_image_file(path)) {
    std::vector<std::string> files = image_files(path);
    return {read_images(files, input), files};
  }
  try {
    if (path.find(".tfrecord") != std::string::npos)
      return {read_tfrecord(path, input, reader_of(reader, "tfrecord", path), preprocessing), {}};
    if (is_csv(path))
      return {read_csv_rows(path, input, reader_of(reader, "csv", path), preprocessing), {}};
  } catch (const Json::exception& e) {  // a damaged model.yaml: a key of the wrong type
    throw UsageError(
        fmt::format("{}: the model's `reader` spec cannot read it: {}", path, e.what()));
  }
  return {read_idx_images(path, input), {}};
}

}  // namespace kiln::exports
