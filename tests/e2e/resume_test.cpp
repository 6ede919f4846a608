// End-to-end: a `kiln train` killed with SIGKILL at random moments (checkpoint writes included)
// and continued with `kiln train --resume` ends with weights and EMA weights bitwise equal to an
// uninterrupted run (CPU, train.deterministic), and logs the same validation values. SIGTERM
// saves and exits 143; --resume alone finds the unfinished run; a non-resumable --set is refused;
// a corrupt newest checkpoint is skipped for the one before it, a missing one reported, and when
// none is valid the run is left alone; a finished run has nothing to resume; a run another
// process holds is refused; config files given with --resume may change resumable keys only.
// What TensorBoard shows of a resumed run is what it shows of the uninterrupted one: every step
// once.

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"
#include "tests/support/tensorboard_view.h"

#include "kiln/core/remove_tree.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using testing::interrupt;
using testing::latest_checkpoint;
using testing::read_file;
using testing::run_dir_of;
using testing::validation_rows;
namespace fs = std::filesystem;

// 16 steps per epoch, 480 in all; a log line every 4 steps, so about 120 moments to stop at.
// Dropout and two loader workers make the random generators and the data position matter; the
// parameter groups (rates and decays by name) make the optimizer's state several groups.
constexpr const char* kConfig = R"(version: 1
name: resume_check
seed: 3
data:
  train: {type: synthetic, task: curve, function: sin, size: 512, noise: 0.1, seed: 1}
  val: {type: synthetic, task: curve, function: sin, size: 256, noise: 0.1, seed: 2}
  batch_size: 32
  workers: 2
model: {type: mlp, num_classes: 1, hidden: [32, 32], activation: tanh, dropout: 0.1}
loss: mse
metrics: []
optimizer: {type: adamw, lr: 1.0e-2, weight_decay: 0.01}
scheduler: cosine
train: {max: 30 epochs, validate_every: 3 epochs, log_every: 4 steps, deterministic: true,
        lr_scales: {"layers.1.*": 0.5}, weight_decay_scales: {"*.bias": 0}}
callbacks:
  - {type: checkpoint, every: 1 epoch, keep_last: 2}
  - {type: ema, decay: 0.99}
runtime: {threads: 1}
)";

class Resume : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    straight_dir_ = new testing::TempDir;
    straight_run_ = new std::string(train_to_end(*straight_dir_));
  }
  static void TearDownTestSuite() {
    delete straight_run_;
    delete straight_dir_;
  }

  static std::string kiln() { return KILN_BINARY; }
  static std::string train_command(const testing::TempDir& dir) {
    return kiln() + " train " + dir.write("config.yaml", kConfig) + " --runs-root " +
           dir.file("runs");
  }
  static std::string train_to_end(const testing::TempDir& dir) {
    auto run = testing::run_command(train_command(dir));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    return testing::run_dir_of(run.out);
  }

  void expect_same_as_straight(const std::string& run) {
    std::string a = latest_checkpoint(*straight_run_), b = latest_checkpoint(run);
    EXPECT_EQ(fs::path(a).filename(), fs::path(b).filename());
    EXPECT_TRUE(read_file(a + "/model.safetensors") == read_file(b + "/model.safetensors"))
        << "weights differ from the uninterrupted run's";
    EXPECT_TRUE(read_file(a + "/ema.safetensors") == read_file(b + "/ema.safetensors"))
        << "EMA weights differ from the uninterrupted run's";
    EXPECT_EQ(validation_rows(*straight_run_), validation_rows(run));
    expect_tensorboard_as_straight(run);
  }

  // Validation values equal; training values at the same steps (throughput and time differ).
  void expect_tensorboard_as_straight(const std::string& run) {
    testing::ScalarSeries val = testing::tensorboard_scalars(run + "/tensorboard/val");
    EXPECT_FALSE(val.empty());
    EXPECT_EQ(val, testing::tensorboard_scalars(*straight_run_ + "/tensorboard/val"));
    testing::ScalarSeries train = testing::tensorboard_scalars(run + "/tensorboard/train");
    testing::ScalarSeries straight =
        testing::tensorboard_scalars(*straight_run_ + "/tensorboard/train");
    ASSERT_EQ(train.size(), straight.size());
    for (const auto& [tag, points] : straight) {
      std::vector<int64_t> steps, straight_steps;
      for (const auto& point : train[tag]) steps.push_back(point.first);
      for (const auto& point : points) straight_steps.push_back(point.first);
      EXPECT_EQ(steps, straight_steps) << tag;
    }
  }

  static testing::TempDir* straight_dir_;
  static std::string* straight_run_;
};

testing::TempDir* Resume::straight_dir_ = nullptr;
std::string* Resume::straight_run_ = nullptr;

TEST_F(Resume, KillNineAtRandomMomentsThenResumeEndsBitwiseEqual) {
  std::random_device entropy;
  std::mt19937 rng(entropy());
  std::uniform_int_distribution<int> moment(2, 110);
  int first = moment(rng), second = moment(rng);
  SCOPED_TRACE("killed after output lines " + std::to_string(first) + " and " +
               std::to_string(second) + " (rerun to draw others)");
  testing::TempDir dir;
  auto [run, killed] = interrupt(train_command(dir), first, SIGKILL);
  ASSERT_EQ(killed, 128 + SIGKILL);
  ASSERT_FALSE(run.empty());
  // The resumed run is killed too, then finished by a second resume.
  auto [same_run, killed_again] = interrupt(kiln() + " train --resume " + run, second, SIGKILL);
  EXPECT_EQ(same_run, run);
  auto finish = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  EXPECT_THAT(read_file(run + "/run.json"), HasSubstr("\"finished\""));
  expect_same_as_straight(run);
}

TEST_F(Resume, SigtermSavesACheckpointAndExits143) {
  testing::TempDir dir;
  auto [run, code] = interrupt(train_command(dir), 40, SIGTERM);
  EXPECT_EQ(code, 128 + SIGTERM);
  EXPECT_THAT(read_file(run + "/run.json"), HasSubstr("\"stopped\""));
  EXPECT_THAT(read_file(run + "/train.log"), HasSubstr("received signal 15"));
  // The checkpoint is of the step it stopped at, whether or not a periodic one fell there.
  std::string log = read_file(run + "/train.log");
  size_t at = log.find("stopping at step ");
  ASSERT_NE(at, std::string::npos) << log;
  int64_t step = std::stoll(log.substr(at + 17));
  char name[32];
  std::snprintf(name, sizeof name, "step-%09lld", static_cast<long long>(step));
  EXPECT_EQ(fs::path(latest_checkpoint(run)).filename(), name);
  auto finish = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  expect_same_as_straight(run);
}

TEST_F(Resume, ResumeWithoutARunDirectoryContinuesTheNewestUnfinishedRun) {
  testing::TempDir dir;
  std::string finished = train_to_end(dir);
  auto [run, killed] = interrupt(train_command(dir), 30, SIGKILL);
  ASSERT_NE(run, finished);
  auto finish = testing::run_command(train_command(dir) + " --resume");
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  EXPECT_EQ(run_dir_of(finish.out), run);
  expect_same_as_straight(run);
  auto nothing_left = testing::run_command(train_command(dir) + " --resume");
  EXPECT_EQ(nothing_left.exit_code, 2);
  EXPECT_THAT(nothing_left.err, HasSubstr("no unfinished run of \"resume_check\""));
}

TEST_F(Resume, RefusesToChangeANonResumableKey) {
  testing::TempDir dir;
  auto [run, killed] = interrupt(train_command(dir), 30, SIGKILL);
  auto refused =
      testing::run_command(kiln() + " train --resume " + run + " --set optimizer.lr=0.5");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("--set changes optimizer.lr"));
  EXPECT_THAT(refused.err, HasSubstr("train.max"));  // the keys that may change
  auto with_config =
      testing::run_command(kiln() + " train " + dir.file("config.yaml") + " --resume " + run);
  EXPECT_EQ(with_config.exit_code, 2);
  EXPECT_THAT(with_config.err, HasSubstr("drop the config files"));
}

TEST_F(Resume, ACorruptNewestCheckpointIsSkippedForTheOneBefore) {
  testing::TempDir dir;
  auto [run, killed] = interrupt(train_command(dir), 60, SIGKILL);
  std::string newest = latest_checkpoint(run);
  {
    std::fstream weights(newest + "/model.safetensors",
                         std::ios::in | std::ios::out | std::ios::binary);
    weights.seekg(-3, std::ios::end);
    char byte = static_cast<char>(weights.get());
    weights.seekp(-3, std::ios::end);
    weights.put(static_cast<char>(~byte));
  }
  auto finish = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  EXPECT_THAT(finish.out, HasSubstr("warning: skipping checkpoint " + newest));
  EXPECT_THAT(finish.out, HasSubstr("checksum or size differs"));
  expect_same_as_straight(run);
}

// A copy of the uninterrupted run under `dir`/runs/resume_check, marked as a run that crashed
// ("running") unless `finished`.
std::string copy_of_straight_run(const testing::TempDir& dir, const std::string& straight,
                                 bool finished) {
  std::string copy = dir.file("runs/resume_check/" + fs::path(straight).filename().string());
  fs::create_directories(fs::path(copy).parent_path());
  fs::copy(straight, copy, fs::copy_options::recursive);
  if (!finished) {
    std::string info = read_file(copy + "/run.json");
    info.replace(info.find("\"finished\""), 10, "\"running\"");
    std::ofstream(copy + "/run.json") << info;
  }
  return copy;
}

// Every file of a run, by path, with its bytes: to show that a refused resume changed nothing.
std::map<std::string, std::string> files_of(const std::string& run) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(run))
    if (entry.is_regular_file()) files[entry.path().string()] = read_file(entry.path().string());
  return files;
}

TEST_F(Resume, AFinishedRunHasNothingToResumeAndStaysAsItIs) {
  testing::TempDir dir;
  std::string run = copy_of_straight_run(dir, *straight_run_, true);
  auto before = files_of(run);
  auto again = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("the run has finished; nothing to resume"));
  before.erase(run + "/lock");  // made by the resume, empty of meaning once it ends
  auto after = files_of(run);
  after.erase(run + "/lock");
  EXPECT_TRUE(before == after) << "resuming a finished run changed its files";
}

TEST_F(Resume, WhenNoCheckpointIsValidNothingIsDeleted) {
  testing::TempDir dir;
  std::string run = copy_of_straight_run(dir, *straight_run_, false);
  for (const auto& entry : fs::directory_iterator(run + "/checkpoints"))
    if (entry.is_directory()) std::ofstream(entry.path() / "model.safetensors") << "damaged";
  auto before = files_of(run);
  auto refused = testing::run_command(kiln() + " train --resume " + run);
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("has no valid checkpoint"));
  EXPECT_THAT(refused.err, HasSubstr("its checkpoints and metrics.csv are left as they are"));
  auto after = files_of(run);
  for (const auto& [path, bytes] : before) {
    if (path.find("/checkpoints/") == std::string::npos && path != run + "/metrics.csv") continue;
    EXPECT_TRUE(after.count(path) && after.at(path) == bytes) << path << " changed";
  }
}

TEST_F(Resume, ALatestPointerToAMissingCheckpointIsReportedAndTheOneBeforeUsed) {
  testing::TempDir dir;
  std::string run = copy_of_straight_run(dir, *straight_run_, false);
  std::string newest = latest_checkpoint(run);
  remove_tree(newest);
  auto finish = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  EXPECT_THAT(finish.out, HasSubstr("checkpoints/latest names " + newest + ", which is missing"));
  expect_same_as_straight(run);
}

TEST_F(Resume, ARunBeingTrainedIsNotResumedBySecondProcess) {
  testing::TempDir dir;
  std::string run = copy_of_straight_run(dir, *straight_run_, false);
  int held = ::open((run + "/lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  ASSERT_EQ(::write(held, "4242\n", 5), 5);
  auto before = files_of(run);
  auto refused = testing::run_command(kiln() + " train --resume " + run);
  ::close(held);
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("is being trained by another kiln process (pid 4242)"));
  EXPECT_TRUE(before == files_of(run)) << "the refused resume changed the run";
}

TEST_F(Resume, ConfigFilesGivenWithResumeMayChangeOnlyResumableKeys) {
  testing::TempDir dir;
  copy_of_straight_run(dir, *straight_run_, false);
  std::string config = kConfig;
  config.replace(config.find("lr: 1.0e-2"), 10, "lr: 0.5");
  auto refused = testing::run_command(kiln() + " train " + dir.write("edited.yaml", config) +
                                      " --runs-root " + dir.file("runs") + " --resume");
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(dir.file("edited.yaml") + " changes optimizer.lr"));
}

}  // namespace
}  // namespace kiln
