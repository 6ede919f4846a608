// The CPUs a process may use: the fewest of those online, its affinity and its cgroup's quota
// (both cgroup versions' files, read as Linux writes them; malformed text is no quota).

#include "kiln/core/usable_cpus.h"

#include <gtest/gtest.h>
#include <sched.h>

namespace kiln {
namespace usable_cpus_test {

TEST(UsableCpus, TheFewestOfOnlineAffinityAndQuota) {
  UsableCpus container = usable_cpus_from(64, 64, 2.0);
  EXPECT_EQ(container.count, 2) << "a container limited to 2 CPUs on a 64-core host";
  EXPECT_EQ(container.why, "2 CPUs: 64 online, 64 in this process's affinity, a cgroup quota of 2");
  EXPECT_EQ(usable_cpus_from(64, 64, 1.5).count, 2) << "a part of a CPU still runs a thread";
  EXPECT_EQ(usable_cpus_from(64, 64, 0.25).count, 1);
  EXPECT_EQ(usable_cpus_from(64, 4, std::nullopt).count, 4) << "taskset, a cpuset";
  EXPECT_EQ(usable_cpus_from(8, 4, 16.0).count, 4) << "a quota above the affinity";
  UsableCpus one = usable_cpus_from(1, 1, std::nullopt);
  EXPECT_EQ(one.why, "1 CPU: 1 online, 1 in this process's affinity, no cgroup quota");
  EXPECT_EQ(usable_cpus_from(0, 0, -3.0).count, 1) << "nonsense counts still give a thread";
  // Found by fuzz_cpu_files: a hand-edited cpu.max of 2^63 CPUs overflowed an int.
  EXPECT_EQ(usable_cpus_from(8, 8, *parse_cpu_max("9223372036854775807 1")).count, 8);
}

TEST(UsableCpus, CgroupFilesAsLinuxWritesThem) {
  EXPECT_EQ(parse_cpu_max("max 100000"), std::nullopt);
  EXPECT_EQ(parse_cpu_max("150000 100000"), 1.5);
  EXPECT_EQ(parse_cpu_max("200000 100000"), 2.0);
  for (const char* bad : {"", "150000", "x 100000", "150000 0", "-1 100000", "1 2 3", "1e5 1"})
    EXPECT_EQ(parse_cpu_max(bad), std::nullopt) << bad;
  EXPECT_EQ(parse_cfs_quota("-1", "100000"), std::nullopt);
  EXPECT_EQ(parse_cfs_quota("400000", "100000"), 4.0);
  EXPECT_EQ(parse_cfs_quota("400000", "oops"), std::nullopt);
}

TEST(UsableCpus, ThisProcessIsBoundByItsAffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_GE(usable_cpus().count, 1);
  EXPECT_LE(usable_cpus().count, CPU_COUNT(&set));
}

}  // namespace usable_cpus_test
}  // namespace kiln
