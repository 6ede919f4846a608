#pragma once
// How many CPUs this process may use, which is what thread counts default to: not the machine's
// count (std::thread::hardware_concurrency) but the fewest of the CPUs online, those in the
// process's affinity mask (taskset, a Slurm or Kubernetes cpuset) and its cgroup's CPU quota (a
// container limited to 2 CPUs on a 64-core host runs 2 threads, not 64 that take turns).
// Torch-free. Thread-safety: usable_cpus() reads once (thread-safe static); the rest is pure.

#include <optional>
#include <string>
#include <string_view>

namespace kiln {

struct UsableCpus {
  int count = 1;
  std::string why;  // "2 CPUs: 64 online, 64 in this process's affinity, a cgroup quota of 2"
};

/// From the CPUs online, those in the affinity mask, and a cgroup quota in CPUs (none: no limit).
UsableCpus usable_cpus_from(int online, int affinity, std::optional<double> quota);

/// cgroup v2's cpu.max ("max 100000", "150000 100000"): the quota in CPUs, none without one or
/// for text of another form.
std::optional<double> parse_cpu_max(std::string_view text);
/// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us ("-1": no quota).
std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period);

/// This process's, read once (sched_getaffinity, /proc/self/cgroup, /sys/fs/cgroup).
const UsableCpus& usable_cpus();

}  // namespace kiln
