#pragma once
// Transforms applied to each batch of inputs on its way from the dataset to the model: the
// `data.transforms.train` list while training, `data.transforms.eval` for validation, testing and
// (later) export and serving. A transform sees a whole batch, dimension 0 indexing the examples,
// so elementwise work costs one tensor operation per batch.
//
// Random augmentations draw from a generator seeded per batch from (seed, epoch, batch index):
// a batch is transformed the same way whichever worker thread makes it, and again after a
// resume, with no generator state to save.
// Thread-safety: apply() is const.

#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include "kiln/core/registry.h"

namespace kiln::data {

class Transform {
 public:
  virtual ~Transform() = default;
  /// Transforms `batch`; randomness comes from `rng` only.
  virtual torch::Tensor apply(const torch::Tensor& batch, at::Generator& rng) const = 0;
  /// The same with a generator of seed 0, for deterministic uses and tests.
  torch::Tensor apply(const torch::Tensor& batch) const;
};

using TransformRegistry = Registry<Transform>;
TransformRegistry& transform_registry();

/// The seed of batch `batch` of epoch `epoch` (a SplitMix64 mix, so neighbouring batches draw
/// unrelated numbers).
uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t batch);
/// A CPU generator with that seed.
at::Generator batch_generator(uint64_t seed, int64_t epoch, int64_t batch);

}  // namespace kiln::data
