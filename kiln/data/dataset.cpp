#include "kiln/data/dataset.h"

#include "kiln/core/error.h"

namespace kiln::data {

TensorDataset::TensorDataset(torch::Tensor inputs, torch::Tensor targets, NamedTargets named)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), named_(std::move(named)) {
  KILN_CHECK(inputs_.size(0) == targets_.size(0), "a dataset has {} inputs but {} targets",
             inputs_.size(0), targets_.size(0));
  for (const auto& [name, values] : named_)
    KILN_CHECK(values.size(0) == inputs_.size(0), "a dataset has {} inputs but {} \"{}\" targets",
               inputs_.size(0), values.size(0), name);
}

Batch TensorDataset::gather(const torch::Tensor& indices) const {
  Batch batch{inputs_.index_select(0, indices), targets_.index_select(0, indices), {}, {}};
  for (const auto& [name, values] : named_) batch.targets[name] = values.index_select(0, indices);
  return batch;
}

std::vector<int64_t> TensorDataset::input_shape() const {
  auto sizes = inputs_.sizes();
  return {sizes.begin() + 1, sizes.end()};
}

DatasetInfo TensorDataset::info() const {
  DatasetInfo info;
  for (const auto& named : named_) info.target_names.push_back(named.first);
  return info;
}

Batch StreamingDataset::gather(const torch::Tensor&) const {
  throw InternalError("a streaming dataset has no random access; the loader streams it");
}

io::ImageInput unit_scaled_chw_image(const std::vector<int64_t>& shape) {
  KILN_CHECK(shape.size() == 3, "an image dataset's example has 3 dimensions, not {}",
             shape.size());
  return {shape[0], shape[1], shape[2], true, 1.0 / 255};
}

DatasetRegistry& dataset_registry() {
  static DatasetRegistry registry("dataset", "Sources of training and evaluation examples.");
  return registry;
}

std::string unseen_text(const std::map<std::string, int64_t>& unseen) {
  std::string text;
  for (const auto& [column, count] : unseen)
    text += (text.empty() ? "" : ", ") + column + " " + std::to_string(count);
  return text;
}

}  // namespace kiln::data
