#pragma once
// The examples of a tabular dataset with their input rows written by fitted feature columns:
// what the loader, the model and the evaluator see of `input: [a, b, ...]`; gathered, or
// streamed batch by batch when the records are (cache: none).
// Thread-safety: gather() is const and safe on several threads, as the columns' write().

#include <functional>
#include <memory>

#include "kiln/data/dataset.h"
#include "kiln/data/tabular_dataset.h"

namespace kiln::data {

class ColumnsDataset : public Dataset {
 public:
  // Streamed records (cache: none) stream with their rows written as each batch is decoded.
  class Stream;

  /// `records` must be tabular (as_tabular() non-null); `columns` fitted. When the records skip
  /// corrupt ones (on_corrupt: skip), the rows the columns refuse are found now, on `threads`.
  ColumnsDataset(std::shared_ptr<const Dataset> records,
                 std::shared_ptr<const tabular::FeatureColumns> columns, int64_t threads = 1);
  ColumnsDataset(const ColumnsDataset&) = delete;  // its stream refers to it
  ColumnsDataset& operator=(const ColumnsDataset&) = delete;
  int64_t size() const override { return records_->size(); }
  Batch gather(const torch::Tensor& indices) const override;
  const StreamingDataset* as_streaming() const override;
  std::vector<int64_t> input_shape() const override { return {columns_->width()}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  /// The records' own skipped ones and the rows the columns refused.
  SkippedRecords skipped_records() const override;
  /// The rows the columns refused (on_corrupt: skip), in order: gather() must not be given them
  /// (without_refused() leaves them out).
  const std::vector<int64_t>& refused_rows() const { return refused_.rows; }
  ExampleOrigin locate(int64_t index) const override { return records_->locate(index); }
  /// The records' targets and classes; the columns' layout and the values they found in no
  /// vocabulary in this dataset's rows (not in other splits' that share the columns), not counting
  /// the check at start (which writes every row once).
  DatasetInfo info() const override;

 private:
  // The batch of `count` examples `read` gives, with the input rows the columns write of the
  // features it hands to its visitor.
  Batch with_rows(int64_t count,
                  const std::function<Batch(const tabular::RowVisitor& input)>& read) const;

  std::shared_ptr<const Dataset> records_;
  std::shared_ptr<const tabular::FeatureColumns> columns_;
  std::shared_ptr<const Stream> stream_;  // for streamed records
  tabular::RefusedRows refused_;
  mutable tabular::UnseenCounts unseen_;  // what this dataset's rows met, apart from other splits
};

/// `dataset` less the rows its feature columns refused, when it is a ColumnsDataset that has any.
std::shared_ptr<const Dataset> without_refused(std::shared_ptr<const Dataset> dataset);
/// `indices` (1-D int64) less `refused` (sorted).
torch::Tensor indices_but(const torch::Tensor& indices, const std::vector<int64_t>& refused);

}  // namespace kiln::data
