#pragma once
// What the CPU kiln runs on can do, read from the CPU (Linux's /proc/cpuinfo): its model and
// the instruction sets that decide hardware-dependent defaults (train.precision: auto picks
// bfloat16 only where the CPU computes it natively). Never assumed from the machine a default
// was tuned on: an AVX2-only laptop and an AMX server read differently.
// Torch-free. Thread-safety: this_cpu() reads once (thread-safe static); the rest is pure.

#include <set>
#include <string>
#include <string_view>

namespace kiln {

struct CpuFeatures {
  std::string model = "unknown";  // "Intel(R) Xeon(R) Platinum 8481C", "AMD EPYC 7B13"
  std::set<std::string> flags;    // as the kernel names them: avx2, avx512f, avx512_bf16, amx_bf16

  bool has(const std::string& flag) const { return flags.count(flag) > 0; }
  /// bfloat16 arithmetic in hardware (AVX512-BF16 or AMX): elsewhere LibTorch emulates it,
  /// slower than float32.
  bool native_bf16() const { return has("avx512_bf16") || has("amx_bf16"); }
  /// The widest vector instructions, as said to a user: "AVX512 with BF16 and AMX", "AVX2".
  std::string vector_summary() const;
  /// "AMD EPYC 7B13 (AVX2)".
  std::string describe() const { return model + " (" + vector_summary() + ")"; }
};

/// The first processor's entry of /proc/cpuinfo text: `model name` (x86) or `CPU part`, and
/// `flags` (x86) or `Features` (ARM).
CpuFeatures parse_cpuinfo(std::string_view text);

/// This machine's CPU, read once; an unreadable /proc/cpuinfo gives a model "unknown" and no
/// flags (so no native bfloat16 is assumed).
const CpuFeatures& this_cpu();

}  // namespace kiln
