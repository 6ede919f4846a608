#include "kiln/data/columns_dataset.h"

#include "kiln/core/error.h"

namespace kiln::data {

ColumnsDataset::ColumnsDataset(std::shared_ptr<const Dataset> records,
                               std::shared_ptr<const tabular::FeatureColumns> columns)
    : records_(std::move(records)), columns_(std::move(columns)) {
  KILN_ASSERT(records_->as_tabular() != nullptr);
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

void RowsOf::visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const {
  for (int64_t i = begin; i < end; ++i)
    source_.visit(rows_[size_t(i)], rows_[size_t(i)] + 1,
                  [&](int64_t, const io::Features& features, const io::RecordLocation& where) {
                    visit(i, features, where);
                  });
}

}  // namespace kiln::data
