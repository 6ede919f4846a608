#include "kiln/export/version_inputs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/input_layout.h"
#include "kiln/data/dataset.h"
#include "kiln/experiment/preprocessing_file.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::exports {
namespace {

[[noreturn]] void refuse_input(const std::string& file, const std::string& problem) {
  throw DataError(file, -1, -1, problem);
}

// The columns model.yaml's `reader` feeds the model, in row order: the `input: [...]` or
// `inputs: {part: [...]}` of a CSV or TFRecord spec, each read through a feature column (plain
// numbers too). Null for a reader of images or tensors, or none.
std::optional<tabular::InputGroups> reader_columns(const Json& reader, const std::string& file) {
  if (!reader.is_object()) return std::nullopt;
  const Json& input = reader.value("input", Json());
  const Json& inputs = reader.value("inputs", Json());
  tabular::InputGroups groups;
  try {
    if (inputs.is_object() && !inputs.empty())
      OptionTraits<tabular::InputGroups>::read(inputs, groups, ReadContext{"reader.inputs"});
    else if (input.is_array() && !input.empty())
      groups = tabular::InputGroups(input.get<std::vector<std::string>>());
    else
      return std::nullopt;
  } catch (const Error& e) {
    refuse_input(file, e.what());
  } catch (const Json::exception&) {
    refuse_input(file, "`reader.input` is a list of column names");
  }
  return groups;
}

// "[a, b]", or "wide: [a], deep: [b, c]" for named parts.
std::string groups_text(const tabular::InputGroups& groups) {
  std::vector<std::string> parts;
  for (const auto& [name, columns] : groups.groups)
    parts.push_back((groups.named ? name + ": " : "") +
                    fmt::format("[{}]", fmt::join(columns, ", ")));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

// model.yaml's `reader`: the dataset spec kiln predict reads CSV and TFRecord files with, its files
// left out. Read now as predict will read it (with a file in place of the one predict names), so
// that an option of the wrong type is refused at load, not taken for its default.
void check_reader(const Json& reader, const std::string& file) {
  if (!reader.is_object() || !reader.value("type", Json()).is_string())
    refuse_input(file, "`reader` is a dataset spec, {type: NAME, ...}");
  Json spec = reader;
  if (spec["type"] == "csv") spec["file"] = "given-to-predict.csv";
  if (spec["type"] == "tfrecord") spec["files"] = Json::array({"given-to-predict.tfrecord"});
  try {
    data::dataset_registry().resolve(spec, ReadContext{"reader", nullptr});
  } catch (const Error& e) {
    refuse_input(file, e.what());
  }
}

// preprocessing.json writes the model's input row: as wide as the input, its named parts and
// indices where model.yaml's `layout` puts them, its columns those `reader` lists in their
// order, and there whenever the layout or the reader's columns are.
void check_preprocessing(const experiment::ModelInput& input, const Json& preprocessing,
                         const Json& reader, const std::string& directory) {
  std::string file = experiment::preprocessing_file(directory);
  std::optional<tabular::InputGroups> listed = reader_columns(reader, directory + "/model.yaml");
  if (preprocessing.is_null()) {
    if (!input.layout.empty())
      refuse_input(file,
                   "missing: model.yaml's input has a layout of feature columns, which this file "
                   "holds");
    if (listed)
      refuse_input(file, fmt::format("missing: model.yaml's reader feeds the model the feature "
                                     "columns {}, which this file holds",
                                     groups_text(*listed)));
    return;
  }
  std::unique_ptr<tabular::FeatureColumns> columns =
      tabular::FeatureColumns::from_preprocessing(preprocessing);
  if (listed && *listed != columns->groups())
    refuse_input(file,
                 fmt::format("its columns {} are not those model.yaml's reader feeds the model, "
                             "in their order: {}",
                             groups_text(columns->groups()), groups_text(*listed)));
  if (input.shape != std::vector<int64_t>{columns->width()})
    refuse_input(file,
                 fmt::format("its columns write rows of {} numbers, but model.yaml's input \"{}\" "
                             "has the shape [{}]",
                             columns->width(), input.name, fmt::join(input.shape, ", ")));
  if (layout_json(columns->layout()) != layout_json(input.layout))
    refuse_input(file,
                 fmt::format("its columns lay the row out as {}, but model.yaml's input says {}",
                             show_value(layout_json(columns->layout())),
                             show_value(layout_json(input.layout))));
}

}  // namespace kiln::exports
