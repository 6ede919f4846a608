#include "kiln/engine/cuda_device.h"

// Defined by the CMakeLists for this file alone when LibTorch has CUDA: its CUDA headers exist
// only there.
#ifdef KILN_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace kiln::engine {

std::optional<double> cuda_peak_allocated_mb(torch::Device device) {
#ifdef KILN_WITH_CUDA
  if (!device.is_cuda()) return std::nullopt;
  namespace allocator = c10::cuda::CUDACachingAllocator;
  auto stats = allocator::getDeviceStats(device.has_index() ? device.index() : 0);
  constexpr size_t kAllPools = 0;  // StatType::AGGREGATE
  return double(stats.allocated_bytes[kAllPools].peak) / (1024.0 * 1024.0);
#else
  (void)device;
  return std::nullopt;
#endif
}

std::optional<int> cuda_compute_major(torch::Device device) {
#ifdef KILN_WITH_CUDA
  if (!device.is_cuda()) return std::nullopt;
  return at::cuda::getDeviceProperties(device.has_index() ? device.index() : 0)->major;
#else
  (void)device;
  return std::nullopt;
#endif
}

}  // namespace kiln::engine
