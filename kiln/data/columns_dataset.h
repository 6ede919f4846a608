#pragma once
// The examples of a tabular dataset with their input rows written by fitted feature columns:
// what the loader, the model and the evaluator see of `input: [a, b, ...]`.
// Thread-safety: gather() is const and safe on several threads, as the columns' write().

#include <memory>

#include "kiln/data/dataset.h"

namespace kiln::data {

class ColumnsDataset : public Dataset {
 public:
  /// `records` must be tabular (as_tabular() non-null); `columns` fitted.
  ColumnsDataset(std::shared_ptr<const Dataset> records,
                 std::shared_ptr<const tabular::FeatureColumns> columns);
  int64_t size() const override { return records_->size(); }
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override { return {columns_->width()}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  SkippedRecords skipped_records() const override { return records_->skipped_records(); }
  ExampleOrigin locate(int64_t index) const override { return records_->locate(index); }
  std::vector<std::string> target_names() const override { return records_->target_names(); }
  std::vector<std::string> class_names() const override { return records_->class_names(); }
  tabular::InputLayout input_layout() const override { return columns_->layout(); }

 private:
  std::shared_ptr<const Dataset> records_;
  std::shared_ptr<const tabular::FeatureColumns> columns_;
};

/// The rows `rows` (in that order) of `source`: fitting on the training part of a split that
/// data.val_fraction carved.
class RowsOf : public tabular::TabularSource {
 public:
  RowsOf(const tabular::TabularSource& source, std::vector<int64_t> rows)
      : source_(source), rows_(std::move(rows)) {}
  int64_t rows() const override { return static_cast<int64_t>(rows_.size()); }
  void visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const override;

 private:
  const tabular::TabularSource& source_;
  std::vector<int64_t> rows_;
};

}  // namespace kiln::data
