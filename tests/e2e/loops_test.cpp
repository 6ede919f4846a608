// End-to-end: training loops chosen by `loop:`. A distillation trains a small student from a
// teacher run's soft targets, logs its terms, exports as any run does, resumes bitwise after
// SIGKILL and trains on two processes; a loop config that cannot work fails before training,
// naming its config path.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/resume_check.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace loops_test {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string kiln() { return KILN_BINARY; }

// Four blobs in eight dimensions; the teacher is wider than the student. 8 steps per epoch, a
// log line every 2 steps, checkpoints every epoch.
constexpr const char* kData = R"(data:
  train: {type: synthetic, task: blobs, size: 384, classes: 4, features: 8, spread: 3, seed: 1}
  val_fraction: 0.25
  batch_size: 32
optimizer: {type: adam, lr: 1.0e-2}
callbacks: [{type: checkpoint, every: 1 epoch, keep_last: 2}]
runtime: {threads: 1}
)";

std::string teacher_config() {
  return std::string("version: 1\nname: teacher\nseed: 1\n") + kData +
         "model: {type: mlp, num_classes: 4, hidden: [64]}\n"
         "train: {max: 3 epochs, validate_every: 1 epoch, log_every: 4 steps, deterministic: "
         "true}\n";
}

std::string student_config(const std::string& teacher) {
  return std::string("version: 1\nname: student\nseed: 2\n") + kData +
         "model: {type: mlp, num_classes: 4, hidden: [8], dropout: 0.1}\n"
         "train: {max: 6 epochs, validate_every: 2 epochs, log_every: 2 steps, deterministic: "
         "true}\n"
         "loop: {type: distillation, teacher: " +
         teacher + ", alpha: 0.3, temperature: 2}\n";
}

class Loops : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir;
    auto run =
        testing::run_command(kiln() + " train " + dir_->write("teacher.yaml", teacher_config()) +
                             " --runs-root " + dir_->file("runs"));
    ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
    teacher_ = new std::string(testing::run_dir_of(run.out));
  }
  static void TearDownTestSuite() {
    delete teacher_;
    delete dir_;
  }

  // `kiln train` of the student over `teacher` (default: the suite's teacher run) with `flags`.
  static std::string train_student(const testing::TempDir& dir, const std::string& flags = "",
                                   const std::string& teacher = "") {
    std::string config =
        dir.write("student.yaml", student_config(teacher.empty() ? *teacher_ : teacher));
    return kiln() + " train " + config + " --runs-root " + dir.file("runs") + " " + flags;
  }

  static testing::TempDir* dir_;
  static std::string* teacher_;
};

testing::TempDir* Loops::dir_ = nullptr;
std::string* Loops::teacher_ = nullptr;

TEST_F(Loops, ADistillationTrainsTheStudentLogsItsTermsAndExports) {
  testing::TempDir dir;
  auto run = testing::run_command(train_student(dir));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string student = testing::run_dir_of(run.out);
  std::string metrics = testing::read_file(student + "/metrics.csv");
  EXPECT_THAT(metrics, HasSubstr(",train,distillation/soft_loss,"));
  EXPECT_THAT(metrics, HasSubstr(",train,distillation/loss,"));
  EXPECT_THAT(metrics, HasSubstr(",val,accuracy,"));
  EXPECT_THAT(testing::read_file(student + "/config.yaml"), HasSubstr("type: distillation"));
  // The student alone is exported: the teacher is needed for training only.
  auto exported =
      testing::run_command(kiln() + " export " + student + " --to " + dir.file("export"));
  EXPECT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  EXPECT_TRUE(fs::exists(dir.file("export/student/1/model.safetensors"))) << exported.out;
}

// The teacher run's export (its best checkpoint, as `checkpoint: best` takes from the run)
// teaches exactly what the run does: the students' validations are the same.
TEST_F(Loops, AnExportTeachesAsItsRunDoes) {
  testing::TempDir from_run, from_export;
  auto exported = testing::run_command(kiln() + " export " + *teacher_ + " --to " +
                                       from_export.file("exports"));
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  auto by_run = testing::run_command(train_student(from_run));
  ASSERT_EQ(by_run.exit_code, 0) << by_run.out << by_run.err;
  for (const std::string& teacher :
       {from_export.file("exports/teacher"), from_export.file("exports/teacher/1")}) {
    testing::TempDir dir;
    auto by_export = testing::run_command(train_student(dir, "", teacher));
    ASSERT_EQ(by_export.exit_code, 0) << by_export.out << by_export.err;
    EXPECT_EQ(testing::validation_rows(testing::run_dir_of(by_export.out)),
              testing::validation_rows(testing::run_dir_of(by_run.out)))
        << teacher;
  }
}

TEST_F(Loops, ADistillationKilledAndResumedEndsBitwiseEqual) {
  testing::TempDir straight_dir, killed_dir;
  // Killed after the 12th line of output (about step 14 of 48, past the first checkpoint).
  testing::expect_resumed_as_straight(kiln(), train_student(straight_dir),
                                      train_student(killed_dir), 12, {"model.safetensors"});
}

TEST_F(Loops, ADistillationTrainsOnTwoProcesses) {
  testing::TempDir dir;
  std::string config = dir.write("student.yaml", student_config(*teacher_));
  auto run = testing::run_command(kiln() + " launch --nproc 2 -- train " + config +
                                  " --runs-root " + dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("[rank 1]"));
  fs::path runs = dir.file("runs/student");
  ASSERT_TRUE(fs::is_directory(runs));
  std::string student = fs::directory_iterator(runs)->path().string();
  EXPECT_THAT(testing::read_file(student + "/metrics.csv"),
              HasSubstr(",train,distillation/soft_loss,"));
}

// Whether any run under `root` holds a checkpoint.
bool has_checkpoint(const std::string& root) {
  if (!fs::exists(root)) return false;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.path().filename().string().rfind("step-", 0) == 0) return true;
  return false;
}

// Each config fails before any training step with its path named: a key's value while the config
// is read (no run folder), a teacher that does not fit once the data tells the example's shape
// (the run folder then says "failed", as for any error found while the run is built).
TEST_F(Loops, ALoopThatCannotWorkFailsBeforeTrainingNamingItsPath) {
  testing::TempDir dir;
  struct Case {
    std::string flags, says;
    bool read_with_the_config;
  };
  const Case cases[] = {
      {"--set 'loop.teacher=\"\"'", "config error at loop.teacher: no teacher", false},
      {"--set loop.temperature=0", "config error at loop.temperature", true},
      {"--set loop.alpha=1.5", "config error at loop.alpha", true},
      {"--set 'loop={type: gann}'", "distillation, mean_teacher, supervised", true},
      {"--set loop.teacher=" + dir.file("nowhere"),
       "neither a run folder, one of its checkpoints, nor an export", false},
      {"--set model.num_classes=3", "the teacher gives [4] logits, the model [3]", false},
      {"--set data.train.features=6",
       "the teacher takes examples of shape [8], the training data's are [6]", false},
  };
  int index = 0;
  for (const Case& c : cases) {
    std::string root = dir.file("runs" + std::to_string(index++));
    std::string config = dir.write("student.yaml", student_config(*teacher_));
    auto run =
        testing::run_command(kiln() + " train " + config + " --runs-root " + root + " " + c.flags);
    EXPECT_NE(run.exit_code, 0) << c.flags;
    EXPECT_THAT(run.err, HasSubstr(c.says)) << c.flags;
    EXPECT_THAT(run.out, Not(HasSubstr("step 2 "))) << c.flags << ": it trained";
    EXPECT_FALSE(has_checkpoint(root)) << c.flags;
    if (c.read_with_the_config)
      EXPECT_FALSE(fs::exists(root)) << c.flags << ": a run folder was made";
    else
      EXPECT_THAT(testing::read_file(testing::run_dir_of(run.out) + "/run.json"),
                  HasSubstr("\"status\": \"failed\""))
          << c.flags;
  }
}

}  // namespace loops_test
}  // namespace kiln
