#pragma once
// Transforms applied to each batch of inputs on its way from the dataset to the model: the
// `data.transforms.train` list while training, `data.transforms.eval` for validation, testing and
// (later) export and serving. A transform sees a whole batch, dimension 0 indexing the examples,
// so elementwise work costs one tensor operation per batch.
// Thread-safety: apply() is const.

#include <torch/torch.h>

#include "kiln/core/registry.h"

namespace kiln::data {

class Transform {
 public:
  virtual ~Transform() = default;
  virtual torch::Tensor apply(const torch::Tensor& batch) const = 0;
};

using TransformRegistry = Registry<Transform>;
TransformRegistry& transform_registry();

}  // namespace kiln::data
