// End-to-end: what a run decides from the machine it has, said and kept in run.json:
// train.precision: auto (bf16 only on a CPU that computes it natively, read from the CPU), the
// threads from the CPUs this process may use. A config of `auto` once reached the trainer
// undecided and failed every run: this trains one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/cpu_features.h"
#include "kiln/core/json.h"
#include "kiln/core/text_file.h"
#include "kiln/core/usable_cpus.h"
#include "tests/support/run_command.h"
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

TEST(HardwareChoices, AutoPrecisionAndThreadsAreDecidedFromThisMachineAndRecorded) {
  testing::TempDir dir;
  testing::CommandResult run = testing::run_command(
      std::string(KILN_BINARY) + " train " + KILN_SOURCE_DIR +
      "/configs/examples/synthetic/curve_regression.yaml --set train.precision=auto"
      " --set 'train.max=1 epochs' --set runtime.threads=auto --runs-root " +
      dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string used = this_cpu().native_bf16() ? "bf16" : "fp32";
  EXPECT_THAT(run.out,
              HasSubstr("precision: " + used + " (auto: the CPU, " + this_cpu().describe()));
  Json record = run_record(dir.file("runs"));
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

}  // namespace hardware_choices_test
}  // namespace kiln
