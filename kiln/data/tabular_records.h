#pragma once
// tf.Example records whose inputs feature columns make (a tfrecord dataset with `input: [a, b]`):
// kept serialized in memory, parsed once per use, the targets decoded by their declared specs
// and the features handed to the columns.
// Thread-safety: const methods are safe on several threads.

#include <string>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/data/example_features.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/io/record_store.h"
#include "kiln/tabular/derived_features.h"

namespace kiln::data {

struct TabularRecordNames {
  tabular::InputGroups input;  // columns or plain features
  std::string target;
  std::vector<std::string> targets;  // named targets (multi_head)
  bool skip_corrupt = false;         // on_corrupt: skip
  tabular::DerivedFeatures derived;  // computed into each record before anything reads it
};

class TabularRecords : public Dataset, public TabularDataset, public tabular::TabularSource {
 public:
  /// `targets` decodes the target features (it declares them).
  TabularRecords(io::RecordStore records, FeatureDecoder targets, TabularRecordNames names);

  int64_t size() const override { return records_.size(); }
  /// Unavailable: the inputs need fitted columns (ColumnsDataset).
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override { return {}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  const TabularDataset* as_tabular() const override { return this; }
  ExampleOrigin locate(int64_t index) const override;
  DatasetInfo info() const override {
    DatasetInfo info;
    info.target_names = names_.targets;
    return info;
  }

  tabular::InputGroups input_groups() const override { return names_.input; }
  const tabular::TabularSource& records() const override { return *this; }
  bool skips_corrupt() const override { return names_.skip_corrupt; }
  Batch gather_records(const torch::Tensor& indices,
                       const tabular::RowVisitor& input) const override;

  int64_t rows() const override { return records_.size(); }
  void visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const override;

 private:
  io::RecordStore records_;
  FeatureDecoder targets_;
  TabularRecordNames names_;
};

}  // namespace kiln::data
