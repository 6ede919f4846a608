// End-to-end: `loop: mean_teacher` over data of which a few examples keep their labels
// (data.labels_per_class). It trains, validates teacher and student, checkpoints the teacher as
// the weights eval and export take, resumes bitwise after SIGKILL, trains on two processes; the
// configs that cannot work fail before training, naming the key.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "tests/support/resume_check.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace mean_teacher_test {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string kiln() { return KILN_BINARY; }

// Of the 288 training examples (a quarter of 384 validates), 4 of each of the 4 classes keep
// their labels and 272 are unlabelled: the 16 labelled ones are repeated 6 times (about a quarter
// of 368 examples), 12 steps an epoch.
constexpr const char* kConfig = R"(version: 1
name: semi
seed: 1
data:
  train: {type: synthetic, task: blobs, size: 384, classes: 4, features: 8, spread: 3, seed: 1}
  val_fraction: 0.25
  labels_per_class: 4
  batch_size: 32
model: {type: mlp, num_classes: 4, hidden: [16], dropout: 0.1}
optimizer: {type: adam, lr: 1.0e-2}
loop: {type: mean_teacher, rampup_steps: 20, consistency: 5, noise: 0.1}
train: {max: 6 epochs, validate_every: 2 epochs, log_every: 2 steps, deterministic: true}
callbacks: [{type: checkpoint, every: 1 epoch, keep_last: 2}]
runtime: {threads: 1}
)";

std::string train(const testing::TempDir& dir, const std::string& flags = "") {
  return kiln() + " train " + dir.write("semi.yaml", kConfig) + " --runs-root " + dir.file("runs") +
         " " + flags;
}

// The last value of metrics.csv's rows of `split_tag` ("val,loss"), to four decimals as
// `kiln eval` prints it.
std::string last_value(const std::string& metrics, const std::string& split_tag) {
  std::string value;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    size_t at = line.find("," + split_tag + ",");
    if (at == std::string::npos) continue;
    std::string rest = line.substr(at + split_tag.size() + 2);
    value = fmt::format("{:.4f}", std::stod(rest.substr(0, rest.find(','))));
  }
  return value;
}

TEST(MeanTeacherE2e, TrainsValidatesBothAndTheTeacherIsWhatEvalAndExportTake) {
  testing::TempDir dir;
  auto run = testing::run_command(train(dir));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("368 training examples, 12 steps per epoch"));
  std::string semi = testing::run_dir_of(run.out);
  std::string metrics = testing::read_file(semi + "/metrics.csv");
  for (const char* tag :
       {",val,accuracy,", ",val,student/accuracy,", ",train,mean_teacher/consistency,",
        ",train,mean_teacher/consistency_weight,"})
    EXPECT_THAT(metrics, HasSubstr(tag));
  std::string last = testing::latest_checkpoint(semi);
  EXPECT_TRUE(fs::exists(last + "/ema.safetensors")) << "the teacher's weights";
  // Evaluated again, the run's last checkpoint gives the teacher's last validation, not the
  // student's.
  auto evaluated = testing::run_command(kiln() + " eval " + semi + " --split val");
  ASSERT_EQ(evaluated.exit_code, 0) << evaluated.out << evaluated.err;
  EXPECT_THAT(evaluated.out, HasSubstr(last_value(metrics, "val,loss")));
  EXPECT_NE(last_value(metrics, "val,loss"), last_value(metrics, "val,student/loss"));
  auto exported = testing::run_command(kiln() + " export " + semi + " --to " + dir.file("export"));
  EXPECT_EQ(exported.exit_code, 0) << exported.out << exported.err;
}

TEST(MeanTeacherE2e, KilledAndResumedEndsBitwiseEqual) {
  testing::TempDir straight_dir, killed_dir;
  testing::expect_resumed_as_straight(kiln(), train(straight_dir), train(killed_dir), 14,
                                      {"model.safetensors", "ema.safetensors"});
}

TEST(MeanTeacherE2e, TrainsOnTwoProcesses) {
  testing::TempDir dir;
  auto run =
      testing::run_command(kiln() + " launch --nproc 2 -- train " +
                           dir.write("semi.yaml", kConfig) + " --runs-root " + dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("[rank 1]"));
  EXPECT_THAT(run.out, HasSubstr("val/student/accuracy"));
}

TEST(MeanTeacherE2e, ConfigsThatCannotWorkFailBeforeTrainingNamingTheKey) {
  struct Case {
    std::string flags, says;
  };
  const Case cases[] = {
      {"--set data.labels_per_class=0", "config error at loop: the mean_teacher loop learns"},
      {"--set data.labelled_share=1", "config error at loop: the mean_teacher loop learns"},
      {"--set loop=supervised", "config error at data.labels_per_class: leaves examples"},
      {"--set 'callbacks=[ema]'", "config error at callbacks[0]: the mean_teacher loop keeps"},
      {"--set data.labels_per_class=100", "training examples, fewer than 100"},
      {"--set loop.ema_decay=1", "config error at loop.ema_decay"},
  };
  for (const Case& c : cases) {
    testing::TempDir own;
    auto run = testing::run_command(train(own, c.flags));
    EXPECT_NE(run.exit_code, 0) << c.flags;
    EXPECT_THAT(run.err, HasSubstr(c.says)) << c.flags;
    EXPECT_THAT(run.out, Not(HasSubstr("step 2 "))) << c.flags << ": it trained";
  }
}

}  // namespace mean_teacher_test
}  // namespace kiln
