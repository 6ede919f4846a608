#pragma once
// A view of some examples of another dataset, and the seeded split that carves a validation set
// out of a training set that comes without one (`data.val_fraction`).
// Thread-safety: gather() is const, as the base dataset's.

#include <memory>
#include <string>
#include <utility>

#include "kiln/data/dataset.h"

namespace kiln::data {

class SubsetDataset : public Dataset {
 public:
  /// The examples of `base` at `indices` (1-D int64), in that order.
  SubsetDataset(std::shared_ptr<const Dataset> base, torch::Tensor indices);
  int64_t size() const override { return indices_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override { return base_->input_shape(); }
  torch::Dtype input_dtype() const override { return base_->input_dtype(); }
  SkippedRecords skipped_records() const override { return base_->skipped_records(); }
  DatasetInfo info() const override { return base_->info(); }
  ExampleOrigin locate(int64_t index) const override {
    return base_->locate(indices_[index].item<int64_t>());
  }

 private:
  std::shared_ptr<const Dataset> base_;
  torch::Tensor indices_;
};

/// Splits [0, n) by a seeded draw into (kept, carved), `carved` holding round(n * fraction)
/// indices; both sorted, so each keeps the dataset's order.
std::pair<torch::Tensor, torch::Tensor> carve_indices(int64_t n, double fraction, uint64_t seed);

/// Examples [skip, skip + take) of `base` (take 0 = all the rest); `base` itself when that is all
/// of it. A skip that leaves nothing is a ConfigError at `<path>.skip`.
std::shared_ptr<const Dataset> take_range(std::shared_ptr<const Dataset> base, int64_t skip,
                                          int64_t take, const std::string& path);

}  // namespace kiln::data
