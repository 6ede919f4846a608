#pragma once
// tf.Example records whose inputs feature columns make, streamed from their files (a tfrecord
// dataset with `input: [...]` or `inputs` and `cache: none`): each epoch reads them again,
// interleaved and shuffled as any streamed tfrecord dataset (open(), decode_records()); the
// columns' passes (fitting, checking, `kiln data stats`) read them in file order, once per pass:
// one reader hands the pass's parts out in order, and each thread parses its own.
// Thread-safety: const methods on several threads; visit() from the threads of one pass at a
// time, each part begun once and in order (as tabular/parallel_pass.h does).

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/data/example_features.h"
#include "kiln/data/tabular_dataset.h"
#include "kiln/data/tabular_records.h"
#include "kiln/io/record_stream.h"

namespace kiln::data {

struct StreamOptions {
  int64_t shuffle_buffer = 1024;
  int64_t cycle_length = 4;
};

class StreamedTabularRecords : public StreamingDataset,
                               public TabularDataset,
                               public tabular::TabularSource {
 public:
  StreamedTabularRecords(io::RecordCatalog catalog, FeatureDecoder targets,
                         TabularRecordNames names, StreamOptions stream);

  int64_t size() const override { return catalog_->size(); }
  std::vector<int64_t> input_shape() const override { return {}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  const TabularDataset* as_tabular() const override { return this; }
  DatasetInfo info() const override {
    DatasetInfo info;
    info.target_names = names_.targets;
    return info;
  }

  int64_t examples_per_epoch(int64_t world) const override;
  int64_t examples_of_rank(int64_t rank, int64_t world) const override;
  std::unique_ptr<io::RecordStream> open(io::EpochPlan plan) const override;
  /// Unavailable: the inputs need fitted columns (ColumnsDataset decodes through them).
  Batch decode(const std::vector<io::Record>& records) const override;

  tabular::InputGroups input_groups() const override { return names_.input; }
  const tabular::TabularSource& records() const override { return *this; }
  bool skips_corrupt() const override { return names_.skip_corrupt; }
  /// Unavailable: streamed records have no random access.
  Batch gather_records(const torch::Tensor& indices,
                       const tabular::RowVisitor& input) const override;
  Batch decode_records(const std::vector<io::Record>& records,
                       const tabular::RowVisitor& input) const override;

  int64_t rows() const override { return catalog_->size(); }
  /// Records [begin, end) in file order, once every record before `begin` has been read by the
  /// pass; `begin` 0 starts a new pass from the first file.
  void visit(int64_t begin, int64_t end, const tabular::RowVisitor& visit) const override;

 private:
  std::vector<io::Record> take_in_order(int64_t begin, int64_t end) const;

  std::shared_ptr<const io::RecordCatalog> catalog_;
  FeatureDecoder targets_;
  TabularRecordNames names_;
  StreamOptions stream_;
  // The pass's reader: where it stands, and the error that stopped it (every later part fails
  // with it rather than wait for records that will not come).
  mutable std::mutex mutex_;
  mutable std::condition_variable turn_;
  mutable std::unique_ptr<io::RecordStream> reader_;
  mutable int64_t position_ = -1;  // -1: no pass begun
  mutable std::exception_ptr failed_;
};

}  // namespace kiln::data
