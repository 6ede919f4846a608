#pragma once
// How this process runs a config: its intra-op threads, the global random seed, whether kernels
// must be deterministic, and the device (`runtime:`, `seed`, `train.deterministic`). These are
// process-wide settings of LibTorch, so a command applies them once, explicitly, before it builds
// anything; building an experiment never changes them.
// Thread-safety: apply() on the main thread before any other work.

#include <torch/torch.h>

#include <cstdint>

#include "kiln/engine/runtime_options.h"

namespace kiln::engine {

struct Runtime {
  int64_t threads = 1;
  uint64_t seed = 1;
  bool deterministic = false;
  bool cudnn_benchmark = false;
  torch::Device device = torch::kCPU;

  /// The runtime a config's `runtime:`, `seed` and `train.deterministic` ask for: `threads: auto`
  /// as all cores, `device: auto` as CUDA when there is a CUDA device. A ConfigError at
  /// runtime.device when CUDA is asked for and absent. `local_ranks`: the processes of a job on
  /// this machine, which share its cores.
  static Runtime of(const RuntimeOptions& options, int64_t seed, bool deterministic,
                    int64_t local_ranks = 1);
  /// Sets LibTorch's threads and seed and, when deterministic, its deterministic algorithms
  /// (and the cuBLAS workspace they need, in the environment before CUDA starts), otherwise
  /// cuDNN's benchmark mode as `cudnn_benchmark` says.
  void apply() const;
};

/// Sets the threads one operator may use: LibTorch's intra-op threads (its OpenMP team). Where
/// LibTorch's BLAS is OpenBLAS, OpenBLAS runs on the calling thread alone: its own pool of
/// threads spins in sched_yield between calls and takes cores from the OpenMP team, whose threads
/// spin too while the BLAS works. With both pools, a step of the CNN example took 61-74 ms on
/// 2 cores, with OpenBLAS on one thread 44-50 ms; the MLP's 7-11 ms against 3.5-4.1
/// (docs/benchmarks.md, "A whole run, launch to result").
void set_intra_op_threads(int64_t threads);

}  // namespace kiln::engine
