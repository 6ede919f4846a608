#pragma once
// Datasets: indexable collections of (input, target) examples. The minimal path keeps whole
// datasets as tensors in memory and gathers batches with one index_select; the streaming pipeline
// (TFRecord shards, worker threads) builds on the same interface (issue #3).
// Thread-safety: gather() is const and safe to call from several threads.

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "kiln/core/registry.h"

namespace kiln::data {

/// A batch of examples; dimension 0 indexes the examples.
struct Batch {
  torch::Tensor input, target;
  int64_t size() const { return input.size(0); }
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  /// The examples at `indices` (1-D int64), stacked into one batch.
  virtual Batch gather(const torch::Tensor& indices) const = 0;
  /// Shape of one input example without the batch dimension, e.g. {1, 28, 28}.
  virtual std::vector<int64_t> input_shape() const = 0;
};

/// A dataset held as two tensors whose first dimensions agree.
class TensorDataset : public Dataset {
 public:
  TensorDataset(torch::Tensor inputs, torch::Tensor targets);
  int64_t size() const override { return inputs_.size(0); }
  Batch gather(const torch::Tensor& indices) const override;
  std::vector<int64_t> input_shape() const override;

 private:
  torch::Tensor inputs_, targets_;
};

using DatasetRegistry = Registry<Dataset>;
DatasetRegistry& dataset_registry();

}  // namespace kiln::data
