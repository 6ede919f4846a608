// train.precision: auto with the CPU's features faked both ways (native bfloat16 present and
// absent) and on GPUs of both kinds; an explicit bf16 where it would be emulated warns with the
// measured cost; the record run.json keeps.

#include "kiln/experiment/precision_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/engine/precision.h"

namespace kiln::experiment {

namespace precision_choice_test {

using ::testing::HasSubstr;

PrecisionHardware cpu_with(std::set<std::string> flags, const std::string& model) {
  PrecisionHardware hardware;
  hardware.cpu.model = model;
  hardware.cpu.flags = std::move(flags);
  return hardware;
}

TEST(PrecisionChoice, AutoIsBfloat16OnlyOnACpuThatComputesItNatively) {
  PrecisionChoice native = choose_precision(engine::PrecisionMode::kAuto,
                                            cpu_with({"avx2", "avx512f", "avx512_bf16"}, "Xeon"));
  EXPECT_EQ(native.used, engine::PrecisionMode::kBf16);
  EXPECT_THAT(native.why,
              HasSubstr("the CPU, Xeon (AVX512 with BF16), computes bfloat16 natively"));
  EXPECT_FALSE(native.emulated_bf16);
  PrecisionChoice amx =
      choose_precision(engine::PrecisionMode::kAuto, cpu_with({"amx_bf16"}, "SPR"));
  EXPECT_EQ(amx.used, engine::PrecisionMode::kBf16);

  PrecisionChoice emulated =
      choose_precision(engine::PrecisionMode::kAuto, cpu_with({"avx2", "fma"}, "AMD EPYC 7B13"));
  EXPECT_EQ(emulated.used, engine::PrecisionMode::kFp32);
  EXPECT_THAT(emulated.why, HasSubstr("the CPU, AMD EPYC 7B13 (AVX2), has no native bfloat16"));
  EXPECT_FALSE(emulated.emulated_bf16) << "auto emulates nothing: no warning";
}

// ONEDNN_MAX_CPU_ISA=AVX2 holds oneDNN's kernels below the CPU's bfloat16 instructions: LibTorch
// then emulates bfloat16 there, and auto must see it as an AVX2-only CPU would.
TEST(PrecisionChoice, AutoIsFloat32WhereOnednnIsHeldBelowTheCpusBfloat16) {
  PrecisionHardware held = cpu_with({"avx2", "avx512f", "avx512_bf16"}, "AMD EPYC 9B14");
  held.onednn_isa = "avx2";
  PrecisionChoice choice = choose_precision(engine::PrecisionMode::kAuto, held);
  EXPECT_EQ(choice.used, engine::PrecisionMode::kFp32);
  EXPECT_THAT(choice.why, HasSubstr("held to avx2 (ONEDNN_MAX_CPU_ISA)"));
  EXPECT_TRUE(choose_precision(engine::PrecisionMode::kBf16, held).emulated_bf16);
  EXPECT_THAT(emulated_bf16_warning(held, 3.2), HasSubstr("held to avx2 by ONEDNN_MAX_CPU_ISA"));

  for (const char* isa : {"avx512_core_bf16", "avx512_core_amx", "avx10_1_512_amx", ""}) {
    held.onednn_isa = isa;
    EXPECT_EQ(choose_precision(engine::PrecisionMode::kAuto, held).used,
              engine::PrecisionMode::kBf16)
        << isa;
  }
  PrecisionHardware no_bf16 = cpu_with({"avx2"}, "EPYC 7B13");
  no_bf16.onednn_isa = "avx512_core_bf16";  // oneDNN never claims more than the CPU has
  EXPECT_EQ(choose_precision(engine::PrecisionMode::kAuto, no_bf16).used,
            engine::PrecisionMode::kFp32);
}

TEST(PrecisionChoice, AutoOnAGpuIsBfloat16FromAmpereOnElseFloat16) {
  PrecisionHardware ampere;
  ampere.cuda = true;
  ampere.cuda_major = 8;
  EXPECT_EQ(choose_precision(engine::PrecisionMode::kAuto, ampere).used,
            engine::PrecisionMode::kBf16);
  PrecisionHardware turing = ampere;
  turing.cuda_major = 7;
  PrecisionChoice older = choose_precision(engine::PrecisionMode::kAuto, turing);
  EXPECT_EQ(older.used, engine::PrecisionMode::kFp16);
  EXPECT_THAT(older.why, HasSubstr("compute capability 7"));
  PrecisionHardware unknown = ampere;
  unknown.cuda_major.reset();
  EXPECT_EQ(choose_precision(engine::PrecisionMode::kAuto, unknown).used,
            engine::PrecisionMode::kFp16);
}

TEST(PrecisionChoice, AnExplicitBf16IsKeptAndWarnedOfWhereItIsEmulated) {
  PrecisionHardware avx2 = cpu_with({"avx2"}, "AMD EPYC 7B13");
  PrecisionChoice asked = choose_precision(engine::PrecisionMode::kBf16, avx2);
  EXPECT_EQ(asked.used, engine::PrecisionMode::kBf16);
  EXPECT_TRUE(asked.emulated_bf16);
  EXPECT_EQ(asked.why, "asked by train.precision");
  std::string warning = emulated_bf16_warning(avx2, 7.94);
  EXPECT_THAT(warning, HasSubstr("AMD EPYC 7B13 (AVX2)"));
  EXPECT_THAT(warning, HasSubstr("7.9x the time of float32"));
  EXPECT_THAT(warning, HasSubstr("train.precision: auto (or fp32)"));

  EXPECT_FALSE(
      choose_precision(engine::PrecisionMode::kBf16, cpu_with({"avx512_bf16"}, "x")).emulated_bf16);
  PrecisionHardware gpu = avx2;
  gpu.cuda = true;
  EXPECT_FALSE(choose_precision(engine::PrecisionMode::kBf16, gpu).emulated_bf16)
      << "the GPU computes it";
  EXPECT_FALSE(choose_precision(engine::PrecisionMode::kFp32, avx2).emulated_bf16);
}

TEST(PrecisionChoice, TheRecordSaysWhatWasAskedUsedAndWhy) {
  PrecisionHardware avx2 = cpu_with({"avx2"}, "AMD EPYC 7B13");
  Json auto_record = precision_record(choose_precision(engine::PrecisionMode::kAuto, avx2),
                                      avx2.cpu, std::nullopt);
  EXPECT_EQ(auto_record["asked"], "auto");
  EXPECT_EQ(auto_record["used"], "fp32");
  EXPECT_EQ(auto_record["cpu"], "AMD EPYC 7B13 (AVX2)");
  EXPECT_FALSE(auto_record.contains("bf16_slowdown"));
  Json bf16_record =
      precision_record(choose_precision(engine::PrecisionMode::kBf16, avx2), avx2.cpu, 6.5);
  EXPECT_EQ(bf16_record["bf16_slowdown"], 6.5);
}

// On this machine's CPU: a ratio measured, auto decided from its flags, and the trainer given
// the decision.
TEST(PrecisionChoice, ThisMachineMeasuresAndTheTrainerChoosesAlike) {
  EXPECT_GT(measure_bf16_slowdown(), 0.0);
  engine::PrecisionMode chosen =
      choose_precision(engine::PrecisionMode::kAuto, hardware_of(torch::kCPU)).used;
  EXPECT_EQ(chosen, hardware_of(torch::kCPU).cpu_computes_bf16() ? engine::PrecisionMode::kBf16
                                                                 : engine::PrecisionMode::kFp32);
  EXPECT_NO_THROW(engine::Precision(chosen, torch::kCPU));
  EXPECT_THROW(engine::Precision(engine::PrecisionMode::kAuto, torch::kCPU), Error)
      << "decided before the trainer";
}

}  // namespace precision_choice_test
}  // namespace kiln::experiment
