#include "kiln/data/columns_dataset.h"

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/data/subset.h"

namespace kiln::data {

ColumnsDataset::ColumnsDataset(std::shared_ptr<const Dataset> records,
                               std::shared_ptr<const tabular::FeatureColumns> columns,
                               int64_t threads)
    : records_(std::move(records)), columns_(std::move(columns)) {
  const TabularDataset* tabular = records_->as_tabular();
  KILN_ASSERT(tabular != nullptr);
  if (tabular->skips_corrupt()) refused_ = columns_->refused(tabular->records(), threads);
  unseen_before_ = columns_->unseen();
}

std::map<std::string, int64_t> ColumnsDataset::unseen_categories() const {
  std::map<std::string, int64_t> counts;
  for (const auto& [column, count] : columns_->unseen()) {
    auto before = unseen_before_.find(column);
    int64_t since = count - (before == unseen_before_.end() ? 0 : before->second);
    if (since > 0) counts[column] = since;
  }
  return counts;
}

Batch ColumnsDataset::gather(const torch::Tensor& indices) const {
  torch::Tensor input = torch::empty({indices.size(0), columns_->width()}, torch::kFloat32);
  float* rows = input.data_ptr<float>();
  int64_t width = columns_->width();
  Batch batch = records_->as_tabular()->gather_records(
      indices, [&](int64_t i, const io::Features& features, const io::RecordLocation& where) {
        columns_->write(features, where, rows + i * width);
      });
  batch.input = input;
  return batch;
}

SkippedRecords ColumnsDataset::skipped_records() const {
  SkippedRecords skipped = records_->skipped_records();
  if (skipped.count == 0) skipped.first_problem = refused_.first_problem;
  skipped.count += static_cast<int64_t>(refused_.rows.size());
  return skipped;
}

std::shared_ptr<const Dataset> without_refused(std::shared_ptr<const Dataset> dataset) {
  auto columns = std::dynamic_pointer_cast<const ColumnsDataset>(dataset);
  if (!columns || columns->refused_rows().empty()) return dataset;
  torch::Tensor all = torch::arange(dataset->size(), torch::kInt64);
  return std::make_shared<SubsetDataset>(dataset, indices_but(all, columns->refused_rows()));
}

torch::Tensor indices_but(const torch::Tensor& indices, const std::vector<int64_t>& refused) {
  std::vector<int64_t> kept;
  torch::Tensor contiguous = indices.contiguous();
  const int64_t* index = contiguous.data_ptr<int64_t>();
  for (int64_t i = 0; i < contiguous.numel(); ++i)
    if (!std::binary_search(refused.begin(), refused.end(), index[i])) kept.push_back(index[i]);
  return torch::tensor(kept, torch::kInt64);
}

}  // namespace kiln::data
