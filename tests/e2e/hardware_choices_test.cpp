// End-to-end: what a run decides from the machine it has, said and kept in run.json:
// train.precision: auto (bf16 only on a CPU that computes it natively, read from the CPU and
// from the instructions oneDNN's kernels may use), the threads from the CPUs this process may
// use, runtime.channels_last: auto from timed steps, kept when the run is resumed. A config of
// `auto` once reached the trainer undecided and failed every run: this trains one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/cpu_features.h"
#include "kiln/core/json.h"
#include "kiln/core/text_file.h"
#include "kiln/core/usable_cpus.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace hardware_choices_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// The run.json of the one run under `root`.
Json run_record(const std::string& root) {
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.path().filename() == "run.json") return Json::parse(read_text_file(entry.path()));
  ADD_FAILURE() << "no run.json under " << root;
  return Json();
}

// Whether oneDNN's kernels, as run.json records them, compute bfloat16 (AVX512-BF16, AMX).
bool kernels_compute_bf16(const Json& record) {
  const Json& isa = record["cpu_kernels"]["onednn_isa"];
  if (!isa.is_string()) return true;  // oneDNN does not say: the CPU's flags decide
  std::string name = isa.get<std::string>();
  return name.find("bf16") != std::string::npos || name.find("amx") != std::string::npos ||
         name.find("avx10") != std::string::npos;
}

// A small convolutional network on 256 Fashion-MNIST test images.
std::string conv_config() {
  return "version: 1\nname: layout\nseed: 1\n"
         "data: {train: {type: fashion_mnist, split: test}, take: 256, batch_size: 32}\n"
         "model: {type: sequential, layers: [{type: conv2d, out: 8, kernel: 3, padding: same}, "
         "batchnorm, relu, flatten, {type: linear, out: 10}]}\n"
         "train: {max: 4 steps, monitor: train/loss, mode: min}\n"
         "callbacks: [{type: checkpoint, every: 2 steps}]\n"
         "runtime: {threads: 1}\n";
}

TEST(HardwareChoices, AutoPrecisionAndThreadsAreDecidedFromThisMachineAndRecorded) {
  testing::TempDir dir;
  testing::CommandResult run = testing::run_command(
      std::string(KILN_BINARY) + " train " + KILN_SOURCE_DIR +
      "/configs/examples/synthetic/curve_regression.yaml --set train.precision=auto"
      " --set 'train.max=1 epochs' --set runtime.threads=auto --runs-root " +
      dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  Json record = run_record(dir.file("runs"));
  std::string used = this_cpu().native_bf16() && kernels_compute_bf16(record) ? "bf16" : "fp32";
  EXPECT_THAT(run.out,
              HasSubstr("precision: " + used + " (auto: the CPU, " + this_cpu().describe()));
  EXPECT_EQ(record["precision"]["asked"], "auto");
  EXPECT_EQ(record["precision"]["used"], used);
  EXPECT_EQ(record["precision"]["cpu"], this_cpu().describe());
  EXPECT_EQ(record["cpu"], this_cpu().describe());
  EXPECT_EQ(record["cpus"], usable_cpus().why);
  EXPECT_EQ(record["runtime"]["threads"], usable_cpus().count);
  EXPECT_THAT(record["runtime"]["threads_why"].get<std::string>(), HasSubstr("auto: "));
  // The instructions LibTorch's kernels chose, as each library says (Debian's LibTorch: both).
  EXPECT_THAT(record["cpu_kernels"]["aten"].get<std::string>(),
              ::testing::AnyOf("NO AVX", "AVX2", "AVX512"));
  EXPECT_THAT(record["cpu_kernels"]["onednn"].get<std::string>(),
              ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_TRUE(record["cpu_kernels"]["onednn_isa"].is_string()) << record["cpu_kernels"];
}

// What is recorded is what the libraries decided, not a guess from the CPU's flags: held to
// fewer instructions by their own settings, both say so.
TEST(HardwareChoices, TheKernelsInstructionsAreTheLibrariesOwnChoice) {
  testing::TempDir dir;
  testing::CommandResult run = testing::run_command(
      "ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=SSE41 " + std::string(KILN_BINARY) +
      " train " + KILN_SOURCE_DIR +
      "/configs/examples/synthetic/curve_regression.yaml --set 'train.max=2 steps' --runs-root " +
      dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  Json kernels = run_record(dir.file("runs"))["cpu_kernels"];
  EXPECT_EQ(kernels["aten"], "NO AVX");  // ATen's name for its default kernels
  EXPECT_EQ(kernels["onednn_isa"], "sse41");
}

// ONEDNN_MAX_CPU_ISA=AVX2 makes a CPU with AVX512-BF16 emulate bfloat16 as an AVX2-only one
// does: auto trains in float32 there, and says why.
TEST(HardwareChoices, AutoPrecisionFollowsTheInstructionsOnednnIsHeldTo) {
  testing::TempDir dir;
  testing::CommandResult run = testing::run_command(
      "ONEDNN_MAX_CPU_ISA=AVX2 " + std::string(KILN_BINARY) + " train " + KILN_SOURCE_DIR +
      "/configs/examples/synthetic/curve_regression.yaml --set train.precision=auto"
      " --set 'train.max=2 steps' --runs-root " +
      dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  Json record = run_record(dir.file("runs"));
  EXPECT_EQ(record["cpu_kernels"]["onednn_isa"], "avx2");
  EXPECT_EQ(record["precision"]["used"], "fp32");
  if (this_cpu().native_bf16())
    EXPECT_THAT(record["precision"]["why"].get<std::string>(),
                HasSubstr("held to avx2 (ONEDNN_MAX_CPU_ISA)"));
}

// auto times a step both ways and keeps what it chose across a resume, even where a new timing
// could choose otherwise: the run.json edited to the other layout is what the resumed run keeps.
TEST(HardwareChoices, ChannelsLastIsTimedAtTheStartAndKeptOnResume) {
  testing::TempDir dir;
  std::string config = dir.write("layout.yaml", conv_config());
  testing::CommandResult run = testing::run_command(std::string(KILN_BINARY) + " train " + config +
                                                    " --runs-root " + dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("a training step took "));
  std::string run_dir = testing::run_dir_of(run.out);
  Json record = run_record(run_dir);
  Json choice = record["channels_last"];
  EXPECT_EQ(choice["asked"], "auto");
  ASSERT_TRUE(choice["used"].is_boolean()) << choice;
  EXPECT_GT(choice["step_ms"]["contiguous"].get<double>(), 0);
  EXPECT_GT(choice["step_ms"]["channels_last"].get<double>(), 0);

  bool other = !choice["used"].get<bool>();
  record["channels_last"]["used"] = other;
  write_file_atomic(run_dir + "/run.json", record.dump(2));
  testing::CommandResult resumed = testing::run_command(
      std::string(KILN_BINARY) + " train --resume " + run_dir + " --set 'train.max=6 steps'");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_THAT(resumed.out, HasSubstr("kept from the run's start"));
  EXPECT_THAT(resumed.out, ::testing::Not(HasSubstr("a training step took ")));
  EXPECT_EQ(run_record(run_dir)["channels_last"]["used"], other);
}

// Asked outright, nothing is timed; a model without 4-D kernels and a deterministic run are not
// timed either; a value other than auto, true or false names the three.
TEST(HardwareChoices, ChannelsLastAskedOrPlainIsNotTimed) {
  testing::TempDir dir;
  std::string config = dir.write("layout.yaml", conv_config());
  auto train = [&](const std::string& sets) {
    return testing::run_command(std::string(KILN_BINARY) + " train " + config + " --runs-root " +
                                dir.file("runs") + " " + sets);
  };
  testing::CommandResult asked = train("--set runtime.channels_last=true");
  ASSERT_EQ(asked.exit_code, 0) << asked.out << asked.err;
  EXPECT_THAT(asked.out, ::testing::Not(HasSubstr("memory format")));
  Json choice = run_record(testing::run_dir_of(asked.out))["channels_last"];
  EXPECT_EQ(choice, Json::parse(R"({"asked": true, "used": true,
                                    "why": "asked by runtime.channels_last"})"));

  testing::CommandResult deterministic = train("--set train.deterministic=true");
  ASSERT_EQ(deterministic.exit_code, 0) << deterministic.out << deterministic.err;
  EXPECT_THAT(deterministic.out, HasSubstr("memory format: contiguous (auto: contiguous under "
                                           "train.deterministic"));

  testing::CommandResult wrong = train("--set runtime.channels_last=maybe");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("runtime.channels_last"));
  EXPECT_THAT(wrong.err, HasSubstr("expected auto, true or false, got \"maybe\""));
}

}  // namespace hardware_choices_test
}  // namespace kiln
