// The CPU read from /proc/cpuinfo text: its model and flags from the first processor's entry, on
// x86 and ARM; native bfloat16 only with AVX512-BF16 or AMX.

#include "kiln/core/cpu_features.h"

#include <gtest/gtest.h>

namespace kiln {
namespace cpu_features_test {

// Shortened entries of the kind Linux writes (two processors, the second ignored).
const char* const kAvx2Only =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
    "flags\t\t: fpu sse2 avx avx2 fma bmi2\n\n"
    "processor\t: 1\nmodel name\t: Other\nflags\t\t: avx512f avx512_bf16\n\n";
const char* const kSapphireRapids =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz\n"
    "flags\t\t: avx avx2 avx512f avx512bw avx512_bf16 amx_bf16 amx_tile amx_int8\n";
const char* const kIceLake =
    "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Gold 6338\nflags\t\t: avx2 avx512f avx512bw\n";
const char* const kGraviton =
    "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd evtstrm bf16 i8mm\n"
    "CPU implementer\t: 0x41\nCPU part\t: 0xd40\n\n";

TEST(CpuFeatures, AnAvx2OnlyCpuHasNoNativeBfloat16) {
  CpuFeatures cpu = parse_cpuinfo(kAvx2Only);
  EXPECT_EQ(cpu.model, "AMD EPYC 7B13");
  EXPECT_TRUE(cpu.has("avx2"));
  EXPECT_FALSE(cpu.has("avx512f")) << "the second processor's flags are not read";
  EXPECT_FALSE(cpu.native_bf16());
  EXPECT_EQ(cpu.describe(), "AMD EPYC 7B13 (AVX2)");
}

TEST(CpuFeatures, Avx512Bf16OrAmxIsNative) {
  CpuFeatures spr = parse_cpuinfo(kSapphireRapids);
  EXPECT_TRUE(spr.native_bf16());
  EXPECT_EQ(spr.vector_summary(), "AVX512 with BF16 and AMX");
  CpuFeatures amx_only;
  amx_only.flags = {"avx2", "amx_bf16"};
  EXPECT_TRUE(amx_only.native_bf16());
  CpuFeatures ice = parse_cpuinfo(kIceLake);
  EXPECT_FALSE(ice.native_bf16()) << "AVX512 without its BF16 extension emulates bfloat16";
  EXPECT_EQ(ice.vector_summary(), "AVX512");
}

TEST(CpuFeatures, ArmEntriesAndUnreadableTextAreNotNative) {
  CpuFeatures arm = parse_cpuinfo(kGraviton);
  EXPECT_EQ(arm.model, "ARM part 0xd40");
  EXPECT_TRUE(arm.has("bf16"));
  EXPECT_FALSE(arm.native_bf16()) << "only x86's BF16 paths are known to kiln's LibTorch";
  CpuFeatures none = parse_cpuinfo("");
  EXPECT_EQ(none.model, "unknown");
  EXPECT_FALSE(none.native_bf16());
  EXPECT_EQ(parse_cpuinfo("garbage without colons\n\x01\x02").describe(), "unknown (no AVX)");
}

TEST(CpuFeatures, ThisCpuIsReadOnce) {
  const CpuFeatures& cpu = this_cpu();
  EXPECT_EQ(&cpu, &this_cpu());
  EXPECT_FALSE(cpu.describe().empty());
}

}  // namespace cpu_features_test
}  // namespace kiln
