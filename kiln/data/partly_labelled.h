#pragma once
// A training set of which only some examples keep their labels (`data.labels_per_class`), as in
// semi-supervised learning: that many examples of each class, drawn by the seed, keep their
// class; every other example is given the target -1 (unlabelled), which only a loop that learns
// from unlabelled examples takes (loop: mean_teacher). So that each batch holds labelled
// examples, the labelled ones are repeated until they make about `data.labelled_share` of an
// epoch (the batches' mean share); a share of 1 keeps the labelled examples alone, once each.
// Thread-safety: gather() is const, as the base dataset's.

#include <memory>
#include <string>

#include "kiln/data/dataset.h"

namespace kiln::data {

class PartlyLabelledDataset : public Dataset {
 public:
  /// Over `base`, whose examples [0, unlabelled) of `order` lose their labels and the rest of
  /// `order` keep them.
  PartlyLabelledDataset(std::shared_ptr<const Dataset> base, torch::Tensor order,
                        int64_t unlabelled);
  int64_t size() const override { return order_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override { return base_->input_shape(); }
  torch::Dtype input_dtype() const override { return base_->input_dtype(); }
  SkippedRecords skipped_records() const override { return base_->skipped_records(); }
  DatasetInfo info() const override;
  ExampleOrigin locate(int64_t index) const override {
    return base_->locate(order_[index].item<int64_t>());
  }
  int64_t unlabelled() const { return unlabelled_; }

 private:
  std::shared_ptr<const Dataset> base_;
  torch::Tensor order_;  // base indices: the unlabelled ones, then the labelled ones repeated
  int64_t unlabelled_;
};

/// The target of an example without its label.
inline constexpr int64_t kUnlabelled = -1;

/// The rows of `batch` whose target is not kUnlabelled, in host memory (1-D int64).
torch::Tensor labelled_indices(const Batch& batch);
/// The rows `rows` (host, 1-D int64) of `batch`: inputs, targets, their host copies and where
/// each came from.
Batch batch_rows(const Batch& batch, const torch::Tensor& rows);
/// The rows of `batch` that have their label: all of them unless `info` marks unlabelled
/// examples. What the checks of a batch's loss look at (before training, the channels-last
/// timing).
Batch labelled_rows(const Batch& batch, const DatasetInfo& info);

/// `base` with `per_class` labels of each class kept (drawn by `seed`), the labelled examples
/// repeated to about `share` of the result; `base` itself when `per_class` is 0. ConfigErrors at
/// `path`.labels_per_class: data that is streamed, has no class targets, or has a class with
/// fewer examples than asked.
std::shared_ptr<const Dataset> partly_labelled(std::shared_ptr<const Dataset> base,
                                               int64_t per_class, double share, uint64_t seed,
                                               const std::string& path);

}  // namespace kiln::data
