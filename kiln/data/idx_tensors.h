#pragma once
// IDX arrays (MNIST-style files) as tensors, shared by the datasets that read them.
// Thread-safety: pure functions.

#include <torch/torch.h>

#include <string>

#include "kiln/io/idx.h"

namespace kiln::data {

/// Unsigned-byte images [N, H, W] or [N, H, W, C] as float32 [N, C, H, W] scaled to [0, 1];
/// throws DataError naming `path` for any other layout.
torch::Tensor idx_images(const io::IdxArray& images, const std::string& path);

/// Integer labels [N] as int64 [N]; throws DataError naming `path` for any other layout.
torch::Tensor idx_labels(const io::IdxArray& labels, const std::string& path);

}  // namespace kiln::data
