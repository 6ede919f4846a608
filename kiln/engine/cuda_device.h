#pragma once
// What kiln asks of LibTorch's CUDA API: the most GPU memory its allocator has handed out
// (system/cuda_peak_allocated_mb, as torch.cuda.max_memory_allocated() reports it), and a
// device's compute capability (train.precision: auto picks bfloat16 from 8 on).

#include <optional>

#include <torch/types.h>

namespace kiln::engine {

/// MiB allocated at most on `device` since the process began; none on a CPU device or in a build
/// against a LibTorch without CUDA.
std::optional<double> cuda_peak_allocated_mb(torch::Device device);

/// The major number of `device`'s compute capability (8 for an A100, 9 for an H100); none on a
/// CPU device or in a build against a LibTorch without CUDA.
std::optional<int> cuda_compute_major(torch::Device device);

}  // namespace kiln::engine
