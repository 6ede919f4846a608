#pragma once
// The records side of a dataset whose inputs feature columns make (Dataset::as_tabular()): kept
// out of dataset.h so that datasets, models and the engine do not include the tabular headers.
// Thread-safety: as Dataset.

#include <torch/torch.h>

#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/io/record_stream.h"
#include "kiln/tabular/feature_columns.h"

namespace kiln::data {

/// The records of a dataset whose inputs feature columns make (tfrecord and csv with a list of
/// inputs).
class TabularDataset {
 public:
  virtual ~TabularDataset() = default;
  /// The columns `input` (or `inputs`, in groups) lists: columns of `data.columns`, or features
  /// read as plain numbers.
  virtual tabular::InputGroups input_groups() const = 0;
  /// Every record, in order: what the columns are fitted on.
  virtual const tabular::TabularSource& records() const = 0;
  /// Whether rows the columns refuse are dropped (on_corrupt: skip) rather than errors.
  virtual bool skips_corrupt() const { return false; }
  /// The examples at `indices` with their targets and no input; `input(i, features, where)` runs
  /// for the i-th of them, in order, on the calling thread.
  virtual Batch gather_records(const torch::Tensor& indices,
                               const tabular::RowVisitor& input) const = 0;
  /// For records streamed from their files (cache: none; the dataset is then a
  /// StreamingDataset too): `records` of an epoch as gather_records() gives examples.
  virtual Batch decode_records(const std::vector<io::Record>& records,
                               const tabular::RowVisitor& input) const;
};

}  // namespace kiln::data
