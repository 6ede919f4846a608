#include "kiln/data/columns_dataset.h"

#include <algorithm>

#include "kiln/core/error.h"
#include "kiln/data/subset.h"
#include "kiln/data/tabular_dataset.h"

namespace kiln::data {
namespace {

// `batch` with only its rows `kept`, in order: inputs, targets and where each came from.
Batch only_rows(Batch batch, std::vector<int64_t> kept) {
  torch::Tensor index = torch::tensor(kept, torch::kInt64);
  batch.input = batch.input.index_select(0, index);
  batch.target = batch.target.index_select(0, index);
  for (auto& [name, target] : batch.targets) target = target.index_select(0, index);
  if (batch.origin)
    batch.origin = [origin = std::move(batch.origin), kept = std::move(kept)](int64_t row) {
      return origin(kept.at(static_cast<size_t>(row)));
    };
  return batch;
}

}  // namespace

ColumnsDataset::ColumnsDataset(std::shared_ptr<const Dataset> records,
                               std::shared_ptr<const tabular::FeatureColumns> columns,
                               int64_t threads)
    : records_(std::move(records)), columns_(std::move(columns)) {
  const TabularDataset* tabular = records_->as_tabular();
  KILN_ASSERT(tabular != nullptr);
  if (tabular->skips_corrupt()) refused_ = columns_->refused(tabular->records(), threads);
  if (records_->as_streaming()) stream_ = std::make_shared<Stream>(*this);
}

DatasetInfo ColumnsDataset::info() const {
  DatasetInfo info = records_->info();
  info.input_layout = columns_->layout();
  info.unseen_categories = columns_->unseen(unseen_);
  return info;
}

class ColumnsDataset::Stream : public StreamingDataset {
 public:
  explicit Stream(const ColumnsDataset& owner)
      : owner_(owner), records_(*owner.records_->as_streaming()) {}
  int64_t size() const override { return owner_.size(); }
  std::vector<int64_t> input_shape() const override { return owner_.input_shape(); }
  torch::Dtype input_dtype() const override { return owner_.input_dtype(); }
  ExampleOrigin locate(int64_t index) const override { return owner_.locate(index); }
  DatasetInfo info() const override { return owner_.info(); }
  int64_t examples_per_epoch(int64_t world) const override {
    return records_.examples_per_epoch(world);
  }
  int64_t examples_of_rank(int64_t rank, int64_t world) const override {
    return records_.examples_of_rank(rank, world);
  }
  std::unique_ptr<io::RecordStream> open(io::EpochPlan plan) const override {
    return records_.open(plan);
  }
  Batch decode(const std::vector<io::Record>& records) const override {
    return owner_.with_rows(static_cast<int64_t>(records.size()),
                            [&](const tabular::RowVisitor& input) {
                              return owner_.records_->as_tabular()->decode_records(records, input);
                            });
  }

 private:
  const ColumnsDataset& owner_;
  const StreamingDataset& records_;
};

const StreamingDataset* ColumnsDataset::as_streaming() const { return stream_.get(); }

Batch ColumnsDataset::gather(const torch::Tensor& indices) const {
  return with_rows(indices.size(0), [&](const tabular::RowVisitor& input) {
    return records_->as_tabular()->gather_records(indices, input);
  });
}

Batch ColumnsDataset::with_rows(
    int64_t count, const std::function<Batch(const tabular::RowVisitor& input)>& read) const {
  torch::Tensor input = torch::empty({count, columns_->width()}, torch::kFloat32);
  float* rows = input.data_ptr<float>();
  int64_t width = columns_->width();
  // Streamed records with on_corrupt: skip: the rows the columns refuse (those the check at
  // start-up counted) leave the batch. Gathered ones were left out before they were asked for.
  bool drop = stream_ && records_->as_tabular()->skips_corrupt();
  std::vector<int64_t> kept;
  tabular::CountUnseenIn counting(unseen_);  // the writes below are on this thread
  Batch batch = read([&](int64_t i, const io::Features& features, const io::RecordLocation& where) {
    if (!drop) return columns_->write(features, where, rows + i * width);
    try {
      columns_->write(features, where, rows + i * width);
      kept.push_back(i);
    } catch (const DataError&) {
    }
  });
  batch.input = input;
  if (drop && static_cast<int64_t>(kept.size()) < count) return only_rows(std::move(batch), kept);
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
  // A stream drops them batch by batch instead.
  if (!columns || columns->refused_rows().empty() || columns->as_streaming()) return dataset;
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
