// End-to-end: the multi_head example trains its two heads together, logs and evaluates each
// head under its own name, monitors a head's metric, and refuses top-level losses beside heads.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/text_file.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

std::string example() {
  return std::string(KILN_SOURCE_DIR) + "/configs/examples/fashion_mnist/multi_head.yaml";
}

TEST(MultiHead, TrainsEveryHeadAndEvaluatesThemByName) {
  testing::TempDir dir;
  auto run = testing::run_command(
      kiln("train " + example() +
           " --set data.train.limit=512 --set data.test.limit=200 "
           "--set 'train.max=8 steps' --set 'train.log_every=4 steps' --set runtime.threads=1 "
           "--runs-root " +
           dir.file("runs")));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("val/class/accuracy"));
  EXPECT_THAT(run.out, HasSubstr("val/reconstruction/loss"));
  std::string run_dir = run.out.substr(5, run.out.find('\n') - 5);

  std::string metrics = read_text_file(run_dir + "/metrics.csv");
  for (const char* row : {",train,class/accuracy,", ",train,reconstruction/loss,", ",train,loss,",
                          ",val,class/loss,", ",val,loss,"})
    EXPECT_THAT(metrics, HasSubstr(row));
  std::string summary = read_text_file(run_dir + "/summary.json");
  EXPECT_THAT(summary, HasSubstr("\"metric\": \"val/class/accuracy\""));

  auto eval = testing::run_command(kiln("eval " + run_dir + " --split test --json"));
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  for (const char* tag : {"\"test/class/accuracy\":", "\"test/class/loss\":",
                          "\"test/reconstruction/loss\":", "\"test/loss\":"})
    EXPECT_THAT(eval.out, HasSubstr(tag));
}

TEST(MultiHead, ConfigMistakesNameTheKey) {
  auto loss = testing::run_command(kiln("train " + example() + " --set loss=mse --dry-run"));
  EXPECT_EQ(loss.exit_code, 2);
  EXPECT_THAT(loss.err, HasSubstr("config error at loss (--set): a multi_head model gives each "
                                  "head its own loss (model.heads[i].loss)"));
  auto twice = testing::run_command(
      kiln("train " + example() + " --set model.heads[1].name=class --dry-run"));
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("config error at model.heads"));
  EXPECT_THAT(twice.err, HasSubstr("no name twice"));
  auto dotted = testing::run_command(
      kiln("train " + example() + " --set model.heads[1].name=re.draw --dry-run"));
  EXPECT_EQ(dotted.exit_code, 2);
  EXPECT_THAT(dotted.err, HasSubstr("config error at model.heads[1].name"));
  EXPECT_THAT(dotted.err, HasSubstr("of letters, digits, '_' and '-'"));
  auto named = testing::run_command(
      kiln("train " + example() + " --set model.heads[1].target=outline --dry-run"));
  EXPECT_EQ(named.exit_code, 2) << "a missing named target is found before training";
  EXPECT_THAT(named.err, HasSubstr("config error at model.heads[1].target"));
  EXPECT_THAT(named.err, HasSubstr("the train data has no target \"outline\"; it has: target, "
                                   "input (the tfrecord"));
  // A head whose output cannot meet its target is a config error at its loss, naming both shapes.
  testing::TempDir dir;
  auto shape = testing::run_command(
      kiln("train " + example() +
           " --set 'model.heads[1].layers[2].out=3' --set data.train.limit=64 --set "
           "data.batch_size=16 --set 'train.max=1 steps' --runs-root " +
           dir.file("runs")));
  EXPECT_EQ(shape.exit_code, 2);
  EXPECT_THAT(shape.err,
              HasSubstr("config error at model.heads[1].loss: mse expects outputs and targets of "
                        "the same shape, got outputs [16, 3, 28, 28] and targets [16, 1, 28, 28]"));
}

}  // namespace
}  // namespace kiln
