#pragma once
// Facts about the process that run.json records (docs/design.md §6): the host, kiln's and
// LibTorch's versions, the CPU and GPUs, the CPU kernels LibTorch picked, the git commit.
// Thread-safety: any thread.

#include <string>

#include "kiln/core/json.h"

namespace kiln::experiment {

/// The LibTorch this binary was built against, e.g. 1.13.0.
std::string libtorch_version();
/// Facts about this process for run.json: host, versions, CPU and GPU, the CPU kernels, git
/// commit.
Json environment_info();
/// The instructions LibTorch's CPU kernels use on this machine, as each library decided from the
/// CPU (and ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA where set): {"aten": "AVX2", "onednn":
/// "2.6.3", "onednn_isa": "avx512_core_bf16"}, null where the library does not say.
Json cpu_kernels();
/// The instructions oneDNN's kernels use here ("avx512_core_bf16", "avx2": the CPU's, held to
/// ONEDNN_MAX_CPU_ISA where set); "" where oneDNN does not say.
std::string onednn_kernels_isa();
/// The same in a line, for logs: "ATen AVX2, oneDNN 2.6.3 (avx512_core_bf16)".
std::string cpu_kernels_text();

}  // namespace kiln::experiment
