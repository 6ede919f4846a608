#pragma once
// train.precision decided from the hardware a run has, never from the one a recipe was tuned
// on: `auto` is bfloat16 only where it is computed natively (a CPU with AVX512-BF16 or AMX,
// read from the CPU; a GPU of compute capability 8 or more), float16 with loss scaling on older
// GPUs, float32 otherwise. An explicit bf16 on a CPU that would emulate it is kept, with a
// warning that measures the cost. Each choice says why, for the console and run.json.
// The trainer is given the choice (the engine's Precision refuses auto).
// Thread-safety: choose_precision is pure; measure_bf16_slowdown runs LibTorch on this thread.

#include <torch/types.h>

#include <optional>
#include <string>

#include "kiln/core/console.h"
#include "kiln/core/cpu_features.h"
#include "kiln/core/json.h"
#include "kiln/engine/train_options.h"

namespace kiln::experiment {

struct PrecisionHardware {
  bool cuda = false;              // the run trains on a CUDA device
  std::optional<int> cuda_major;  // its compute capability, where known
  CpuFeatures cpu;
  std::string onednn_isa;  // the instructions oneDNN's kernels use ("" where unknown)

  /// bfloat16 computed in hardware on the CPU: the CPU has it (AVX512-BF16 or AMX), and
  /// oneDNN's kernels, which compute LibTorch's bfloat16 convolutions and products, are not
  /// held below it (ONEDNN_MAX_CPU_ISA=AVX2 makes such a CPU emulate it).
  bool cpu_computes_bf16() const;
};

struct PrecisionChoice {
  engine::PrecisionMode asked = engine::PrecisionMode::kFp32;
  engine::PrecisionMode used = engine::PrecisionMode::kFp32;
  std::string why;
  bool emulated_bf16 = false;  // bf16 asked on a CPU without it: warn
};

/// The hardware of a run on `device`: this CPU and its oneDNN kernels, and the GPU's compute
/// capability.
PrecisionHardware hardware_of(torch::Device device);

PrecisionChoice choose_precision(engine::PrecisionMode asked, const PrecisionHardware& hardware);

/// The time of a bfloat16 matrix product over that of the same in float32, on this CPU (the
/// median of a few 256x256 products each): what an emulating CPU costs.
double measure_bf16_slowdown();

/// The warning for bf16 on a CPU that emulates it, with the measured `slowdown`.
std::string emulated_bf16_warning(const PrecisionHardware& hardware, double slowdown);

/// A stage's precision: the mode the trainer is given, and what run.json records of it.
struct StagePrecision {
  engine::PrecisionMode used = engine::PrecisionMode::kFp32;
  Json record;
};

/// Decides `asked` on `device`: auto said with its reason on `console`, an emulated bf16 warned
/// of with its measured cost.
StagePrecision decide_precision(engine::PrecisionMode asked, torch::Device device,
                                Console& console);

/// What run.json records: {"asked", "used", "why", "cpu"}, and "bf16_slowdown" where measured.
Json precision_record(const PrecisionChoice& choice, const CpuFeatures& cpu,
                      std::optional<double> slowdown);

}  // namespace kiln::experiment
