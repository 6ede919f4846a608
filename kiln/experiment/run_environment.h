#pragma once
// Facts about the process that run.json records (docs/design.md §6): the host, kiln's and
// LibTorch's versions, the CPU and GPUs, the git commit. Thread-safety: any thread.

#include <string>

#include "kiln/core/json.h"

namespace kiln::experiment {

/// The LibTorch this binary was built against, e.g. 1.13.0.
std::string libtorch_version();
/// Facts about this process for run.json: host, versions, CPU and GPU, git commit.
Json environment_info();

}  // namespace kiln::experiment
