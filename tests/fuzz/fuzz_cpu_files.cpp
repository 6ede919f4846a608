// The kernel's files kiln reads to choose its defaults from the hardware (core/cpu_features.h,
// core/usable_cpus.h): /proc/cpuinfo's text, cgroup v2's cpu.max, and cgroup v1's quota and
// period. Four random-length strings, in that order. What they give must make sense whatever the
// text: a quota, when there is one, positive and finite; the CPUs to use at least one and at most
// those in the affinity (a random count from the rest of the input); native bfloat16 only with a
// flag that says so.

#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "kiln/core/cpu_features.h"
#include "kiln/core/usable_cpus.h"

namespace {

void check_quota(const std::optional<double>& quota, const char* file) {
  if (quota && !(*quota > 0 && std::isfinite(*quota))) {
    std::fprintf(stderr, "%s gave the quota %g\n", file, *quota);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider input(data, size);
  std::string cpuinfo = input.ConsumeRandomLengthString();
  std::string cpu_max = input.ConsumeRandomLengthString();
  std::string quota = input.ConsumeRandomLengthString();
  std::string period = input.ConsumeRandomLengthString();
  kiln::CpuFeatures cpu = kiln::parse_cpuinfo(cpuinfo);
  if (cpu.native_bf16() && !cpu.has("avx512_bf16") && !cpu.has("amx_bf16")) {
    std::fprintf(stderr, "native bfloat16 without its flag\n");
    std::abort();
  }
  std::optional<double> v2 = kiln::parse_cpu_max(cpu_max);
  std::optional<double> v1 = kiln::parse_cfs_quota(quota, period);
  check_quota(v2, "cpu.max");
  check_quota(v1, "cpu.cfs_quota_us");
  int online = input.ConsumeIntegralInRange<int>(-4, 4096);
  int affinity = input.ConsumeIntegralInRange<int>(-4, 4096);
  for (const std::optional<double>& limit : {v2, v1}) {
    kiln::UsableCpus cpus = kiln::usable_cpus_from(online, affinity, limit);
    if (cpus.count < 1 || cpus.count > std::max(1, online)) {
      std::fprintf(stderr, "%d CPUs of %d online\n", cpus.count, online);
      std::abort();
    }
  }
  return 0;
}
