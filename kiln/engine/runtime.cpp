#include "kiln/engine/runtime.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>

#include "kiln/core/usable_cpus.h"

namespace kiln::engine {

Runtime Runtime::of(const RuntimeOptions& options, int64_t seed, bool deterministic,
                    int64_t local_ranks) {
  Runtime runtime;
  runtime.threads = options.threads.value;
  if (runtime.threads == 0)
    runtime.threads = std::max<int64_t>(1, int64_t(usable_cpus().count) / local_ranks);
  runtime.seed = static_cast<uint64_t>(seed);
  runtime.deterministic = deterministic;
  runtime.cudnn_benchmark = options.cudnn_benchmark;
  DeviceChoice device = options.device;
  bool has_cuda = torch::cuda::is_available();
  if (device == DeviceChoice::kCuda && !has_cuda)
    throw ConfigError("runtime.device", "",
                      "cuda requested but this LibTorch sees no CUDA device; use auto or cpu");
  if (device == DeviceChoice::kCuda || (device == DeviceChoice::kAuto && has_cuda))
    runtime.device = torch::kCUDA;
  return runtime;
}

void set_intra_op_threads(int64_t threads) {
  torch::set_num_threads(static_cast<int>(threads));
  // Looked up, not linked: the BLAS under LibTorch is whichever the system provides.
  using SetThreads = void (*)(int);
  if (auto set_blas_threads =
          reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    set_blas_threads(1);
}

void Runtime::apply() const {
  set_intra_op_threads(threads);
  torch::manual_seed(seed);
  if (!deterministic) {
    // Static shapes make the first step's search pay for itself; a new shape (the last, smaller
    // batch) is timed once more.
    at::globalContext().setBenchmarkCuDNN(cudnn_benchmark);
    return;
  }
  // cuBLAS is only deterministic with a fixed workspace, set before it makes its first handle.
  ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 0);
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
}

}  // namespace kiln::engine
