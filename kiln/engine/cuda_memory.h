#pragma once
// The most GPU memory LibTorch's CUDA allocator has handed out (system/cuda_peak_allocated_mb),
// as torch.cuda.max_memory_allocated() reports it.

#include <optional>

#include <torch/types.h>

namespace kiln::engine {

/// MiB allocated at most on `device` since the process began; none on a CPU device or in a build
/// against a LibTorch without CUDA.
std::optional<double> cuda_peak_allocated_mb(torch::Device device);

}  // namespace kiln::engine
