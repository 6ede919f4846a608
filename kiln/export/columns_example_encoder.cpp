#include "kiln/export/columns_example_encoder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/serving/serving_error.h"

namespace kiln::exports {

// The engine's and the experiment's types (checkpoints, callbacks; Experiment, OpenedModel) are
// this file's vocabulary.
using namespace experiment;

namespace {

// A raw feature as a tensor of a request: strings, floats or int64s, one row per example.
serving::TensorSpec raw_input(const tabular::RawFeatureType& type) {
  using Kind = io::Feature::Kind;
  serving::DType dtype = type.kind == Kind::kBytes   ? serving::DType::kString
                         : type.kind == Kind::kFloat ? serving::DType::kFloat32
                                                     : serving::DType::kInt64;
  if (type.values == 1) return {dtype, {-1}};
  return {dtype, {-1, type.values == tabular::RawFeatureType::kVaries ? -1 : type.values}};
}

}  // namespace

std::shared_ptr<const tabular::FeatureColumns> columns_for_input(const Json& preprocessing,
                                                                 const ModelInput& input,
                                                                 const std::string& source) {
  std::shared_ptr<const tabular::FeatureColumns> columns =
      tabular::FeatureColumns::from_preprocessing(preprocessing);
  if (std::vector<int64_t>{columns->width()} != input.shape)
    throw DataError(source, -1, -1,
                    fmt::format("its feature columns write rows of {}; the model takes [{}]",
                                columns->width(), fmt::join(input.shape, ", ")));
  return columns;
}

ColumnsExampleEncoder::ColumnsExampleEncoder(std::shared_ptr<const tabular::FeatureColumns> columns,
                                             std::string input)
    : columns_(std::move(columns)), input_(std::move(input)), features_(columns_->raw_features()) {
  // A request may also bring what only a derived label reads (a whole raw record, tips and
  // all): taken, and not used.
  for (const std::string& feature : columns_->derived().features())
    if (std::find(features_.begin(), features_.end(), feature) == features_.end())
      features_.push_back(feature);
  for (const auto& [name, type] : columns_->raw_types().types())
    raw_inputs_[name] = raw_input(type);
}

serving::HostTensors ColumnsExampleEncoder::encode(
    const std::vector<io::Features>& examples) const {
  int64_t width = columns_->width(), count = static_cast<int64_t>(examples.size());
  serving::HostTensor rows;
  rows.dtype = serving::DType::kFloat32;
  rows.shape = {count, width};
  rows.numbers.reserve(static_cast<size_t>(count * width));
  std::vector<float> row(static_cast<size_t>(width));
  const tabular::DerivedFeatures& derived = columns_->derived_inputs();
  io::Features computed;
  for (int64_t i = 0; i < count; ++i) {
    io::RecordLocation where{"the request's examples", i, -1};
    try {
      const io::Features* features = &examples[static_cast<size_t>(i)];
      if (!derived.empty()) {  // computed as the training records were
        computed = *features;
        derived.apply(computed, where);
        features = &computed;
      }
      columns_->write(*features, where, row.data());
    } catch (const DataError& e) {
      throw serving::ServingError(serving::StatusCode::kInvalidArgument, e.what());
    }
    rows.numbers.insert(rows.numbers.end(), row.begin(), row.end());
  }
  return {{input_, std::move(rows)}};
}

}  // namespace kiln::exports
