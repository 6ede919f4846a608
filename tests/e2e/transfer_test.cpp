// End-to-end: a second run starts from the first run's weights (model.init_from), with part of
// the model frozen, and says so on its console.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string tiny_run(const testing::TempDir& dir, const std::string& extra) {
  return kiln("train " + std::string(KILN_SOURCE_DIR) +
              "/configs/examples/fashion_mnist/mlp.yaml --set data.train.limit=256 --set "
              "'train.max=2 steps' --set runtime.threads=1 --runs-root " +
              dir.file("runs") + " " + extra);
}

// The run directory a `kiln train` output names on its first line.
std::string run_dir_of(const std::string& out) {
  std::string first = out.substr(0, out.find('\n'));
  return first.rfind("run: ", 0) == 0 ? first.substr(5) : "";
}

TEST(Transfer, ASecondRunStartsFromTheFirstWithLayersFrozen) {
  testing::TempDir dir;
  auto first = testing::run_command(tiny_run(dir, ""));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string pretrained = run_dir_of(first.out);
  ASSERT_FALSE(pretrained.empty()) << first.out;

  auto second = testing::run_command(
      tiny_run(dir, "--set 'model.init_from={path: " + pretrained +
                        ", map: {\"layers.1.\": \"layers.1.\"}}' --set 'train.freeze=[layers.1]'"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, HasSubstr("(200,960 frozen)"));
  EXPECT_THAT(second.out, HasSubstr("init_from: 2 tensors from " + pretrained));

  auto wrong = testing::run_command(
      tiny_run(dir, "--set 'model.init_from={path: " + dir.file("none") + "}'"));
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("model.init_from.path"));
}

}  // namespace
}  // namespace kiln
