#include "kiln/experiment/precision_choice.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "kiln/core/schema.h"
#include "kiln/engine/cuda_device.h"
#include "kiln/experiment/run_environment.h"

namespace kiln::experiment {

namespace {

// Ampere (8.x) and later compute bfloat16 in their tensor cores.
constexpr int kFirstBf16Major = 8;

PrecisionChoice on_cuda(PrecisionChoice choice, const PrecisionHardware& hardware) {
  if (hardware.cuda_major && *hardware.cuda_major >= kFirstBf16Major) {
    choice.used = engine::PrecisionMode::kBf16;
    choice.why = fmt::format("auto: the GPU (compute capability {}) computes bfloat16 natively",
                             *hardware.cuda_major);
    return choice;
  }
  choice.used = engine::PrecisionMode::kFp16;
  choice.why = hardware.cuda_major
                   ? fmt::format(
                         "auto: float16 with loss scaling, as the GPU (compute "
                         "capability {}) has no native bfloat16",
                         *hardware.cuda_major)
                   : "auto: float16 with loss scaling, as this build cannot ask the GPU whether "
                     "it computes bfloat16";
  return choice;
}

// What a CPU computes bfloat16 natively with and oneDNN's kernels do not use says why auto
// still chose float32.
std::string fp32_reason(const PrecisionHardware& hardware) {
  if (hardware.cpu.native_bf16())
    return fmt::format(
        "auto: the CPU, {}, computes bfloat16 natively, but oneDNN's kernels are held to {} "
        "(ONEDNN_MAX_CPU_ISA), which would emulate it slower than float32",
        hardware.cpu.describe(), hardware.onednn_isa);
  return fmt::format(
      "auto: the CPU, {}, has no native bfloat16 (AVX512-BF16 or AMX), which LibTorch would "
      "emulate slower than float32",
      hardware.cpu.describe());
}

double median_seconds(const std::function<void()>& run, int times) {
  run();  // once unmeasured: first calls pick kernels and allocate
  std::vector<double> seconds;
  for (int i = 0; i < times; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

}  // namespace

bool PrecisionHardware::cpu_computes_bf16() const {
  if (!cpu.native_bf16()) return false;
  if (onednn_isa.empty()) return true;  // oneDNN does not say: the CPU's word stands
  // oneDNN's names of the instruction sets with bfloat16: avx512_core_bf16, ..._amx, avx10_*.
  for (const char* with_bf16 : {"bf16", "amx", "avx10"})
    if (onednn_isa.find(with_bf16) != std::string::npos) return true;
  return false;
}

PrecisionHardware hardware_of(torch::Device device) {
  PrecisionHardware hardware;
  hardware.cuda = device.is_cuda();
  hardware.cuda_major = engine::cuda_compute_major(device);
  hardware.cpu = this_cpu();
  hardware.onednn_isa = onednn_kernels_isa();
  return hardware;
}

PrecisionChoice choose_precision(engine::PrecisionMode asked, const PrecisionHardware& hardware) {
  PrecisionChoice choice;
  choice.asked = asked;
  choice.used = asked;
  if (asked != engine::PrecisionMode::kAuto) {
    choice.why = "asked by train.precision";
    choice.emulated_bf16 =
        asked == engine::PrecisionMode::kBf16 && !hardware.cuda && !hardware.cpu_computes_bf16();
    return choice;
  }
  if (hardware.cuda) return on_cuda(choice, hardware);
  if (hardware.cpu_computes_bf16()) {
    choice.used = engine::PrecisionMode::kBf16;
    choice.why =
        fmt::format("auto: the CPU, {}, computes bfloat16 natively", hardware.cpu.describe());
  } else {
    choice.used = engine::PrecisionMode::kFp32;
    choice.why = fp32_reason(hardware);
  }
  return choice;
}

double measure_bf16_slowdown() {
  torch::NoGradGuard no_grad;
  torch::Tensor a = torch::rand({256, 256}), b = torch::rand({256, 256});
  torch::Tensor a16 = a.to(torch::kBFloat16), b16 = b.to(torch::kBFloat16);
  double fp32 = median_seconds([&] { torch::mm(a, b); }, 5);
  double bf16 = median_seconds([&] { torch::mm(a16, b16); }, 5);
  return bf16 / std::max(fp32, 1e-9);
}

std::string emulated_bf16_warning(const PrecisionHardware& hardware, double slowdown) {
  std::string held = hardware.cpu.native_bf16() ? fmt::format(
                                                      " (its oneDNN kernels held to {} by "
                                                      "ONEDNN_MAX_CPU_ISA)",
                                                      hardware.onednn_isa)
                                                : " without native bfloat16";
  return fmt::format(
      "train.precision: bf16 on a CPU{}, {}: LibTorch emulates it, and a bfloat16 matrix "
      "product took {:.1f}x the time of float32 here. Set train.precision: auto (or fp32) to "
      "train in float32 on this machine; bf16 pays on CPUs with AVX512-BF16 or AMX.",
      held, hardware.cpu.describe(), slowdown);
}

StagePrecision decide_precision(engine::PrecisionMode asked, torch::Device device,
                                Console& console) {
  PrecisionHardware hardware = hardware_of(device);
  PrecisionChoice choice = choose_precision(asked, hardware);
  std::optional<double> slowdown;
  if (choice.emulated_bf16) {
    slowdown = measure_bf16_slowdown();
    console.line("warning: " + emulated_bf16_warning(hardware, *slowdown));
  }
  if (choice.asked == engine::PrecisionMode::kAuto)
    console.line(fmt::format("precision: {} ({})", enum_name(choice.used), choice.why));
  return {choice.used, precision_record(choice, hardware.cpu, slowdown)};
}

Json precision_record(const PrecisionChoice& choice, const CpuFeatures& cpu,
                      std::optional<double> slowdown) {
  Json record = {{"asked", enum_name(choice.asked)},
                 {"used", enum_name(choice.used)},
                 {"why", choice.why},
                 {"cpu", cpu.describe()}};
  if (slowdown) record["bf16_slowdown"] = *slowdown;
  return record;
}

}  // namespace kiln::experiment
