// End-to-end: a run in three train cycles (stages). The first trains only the output layer (the
// hidden ones frozen), the second everything with another optimizer, the third with a larger
// batch; weights carry over, steps count on across stages, and a `kill -9` at a random moment
// followed by `--resume` ends bitwise equal to the uninterrupted run (CPU, train.deterministic).
// A stage whose config only fails when it starts (a freeze path, a monitor) fails before any
// training.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "kiln/core/json.h"
#include "kiln/io/safetensors.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using testing::interrupt;
using testing::latest_checkpoint;
using ::testing::Not;
using testing::read_file;
using testing::run_dir_of;
using testing::validation_rows;
namespace fs = std::filesystem;

// 8 steps per epoch at batch 32. Stage "head" ends mid-epoch (step 20) and "all" goes on from
// there with the same batches to step 44 (epoch 5.5); "polish" reads batches of 64, so it starts
// on a fresh epoch (6) and takes 4 steps. Dropout and two loader workers make the random
// generators and the data position matter. mlp layers: flatten, linear (1), tanh, dropout,
// linear (4), tanh, dropout, linear (7).
constexpr const char* kConfig = R"(version: 1
name: stages_check
seed: 3
data:
  train: {type: synthetic, task: curve, function: sin, size: 256, noise: 0.1, seed: 1}
  val: {type: synthetic, task: curve, function: sin, size: 128, noise: 0.1, seed: 2}
  batch_size: 32
  workers: 2
model: {type: mlp, num_classes: 1, hidden: [16, 16], activation: tanh, dropout: 0.1}
loss: mse
metrics: []
optimizer: {type: adam, lr: 1.0e-2}
scheduler: cosine
train: {max: 4 epochs, validate_every: 1 epoch, log_every: 2 steps, deterministic: true}
callbacks:
  - {type: checkpoint, every: 1 epoch, keep_last: 0}
  - {type: ema, decay: 0.9}
runtime: {threads: 1}
stages:
  - {name: head, train: {max: 20 steps, freeze: [layers.1, layers.4]}}
  - {name: all, train: {max: 3 epochs, freeze: []}, optimizer: {type: sgd, lr: 0.05, momentum: 0.9}}
  - {name: polish, data: {batch_size: 64}, optimizer: {lr: 0.01}, train: {max: 4 steps}}
)";

std::string checkpoint(const std::string& run, int step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%09d", step);
  return run + "/checkpoints/" + name;
}

// The bytes of one tensor of a checkpoint's model.safetensors.
std::string tensor_bytes(const std::string& checkpoint_dir, const std::string& name) {
  io::SafeTensorsFile file = io::read_safetensors(checkpoint_dir + "/model.safetensors");
  const io::SafeTensor* tensor = file.find(name);
  EXPECT_NE(tensor, nullptr) << name << " in " << checkpoint_dir;
  return tensor ? std::string(reinterpret_cast<const char*>(tensor->data), tensor->size) : "";
}

class Stages : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    straight_dir_ = new testing::TempDir;
    auto run = testing::run_command(train_command(*straight_dir_));
    EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
    straight_out_ = new std::string(run.out);
    straight_run_ = new std::string(run_dir_of(run.out));
  }
  static void TearDownTestSuite() {
    delete straight_out_;
    delete straight_run_;
    delete straight_dir_;
  }

  static std::string kiln() { return KILN_BINARY; }
  static std::string train_command(const testing::TempDir& dir,
                                   const std::string& config = kConfig) {
    return kiln() + " train " + dir.write("config.yaml", config) + " --runs-root " +
           dir.file("runs");
  }
  static testing::TempDir* straight_dir_;
  static std::string* straight_out_;
  static std::string* straight_run_;
};

testing::TempDir* Stages::straight_dir_ = nullptr;
std::string* Stages::straight_out_ = nullptr;
std::string* Stages::straight_run_ = nullptr;

TEST_F(Stages, RunInOrderCountingStepsOnAndRecordEachStage) {
  const std::string& out = *straight_out_;
  size_t head = out.find("stage 1/3: head"), all = out.find("stage 2/3: all"),
         polish = out.find("stage 3/3: polish");
  ASSERT_NE(head, std::string::npos) << out;
  ASSERT_NE(all, std::string::npos) << out;
  ASSERT_NE(polish, std::string::npos) << out;
  EXPECT_LT(head, all);
  EXPECT_LT(all, polish);
  EXPECT_THAT(out,
              HasSubstr("(304 frozen)"));  // hidden layers 1 and 4: (1 + 1) * 16 + (16 + 1) * 16
  Json info = Json::parse(read_file(*straight_run_ + "/run.json"));
  ASSERT_EQ(info["stages"].size(), 3u) << info.dump();
  EXPECT_EQ(info["stages"][0]["end_step"], 20);
  EXPECT_EQ(info["stages"][1]["start_step"], 20);
  EXPECT_EQ(info["stages"][1]["end_step"], 44);
  EXPECT_EQ(info["stages"][2]["end_step"], 48);
  EXPECT_EQ(info["stages"][2]["status"], "finished");
  Json summary = Json::parse(read_file(*straight_run_ + "/summary.json"));
  EXPECT_EQ(summary["steps"], 48);
  EXPECT_EQ(summary["epochs"], 7.0);  // "polish" read all of epoch 6 (index 6 -> 7.0)
  EXPECT_EQ(summary["stages"][1]["name"], "all");
  // A checkpoint at the end of each stage.
  for (int step : {20, 44, 48}) EXPECT_TRUE(fs::exists(checkpoint(*straight_run_, step))) << step;
}

TEST_F(Stages, AFrozenLayerKeepsItsWeightsInTheFirstStageAndTrainsInTheSecond) {
  std::string epoch_one = checkpoint(*straight_run_, 8), head_end = checkpoint(*straight_run_, 20),
              all_end = checkpoint(*straight_run_, 44);
  for (const char* frozen : {"layers.1.weight", "layers.4.bias"}) {
    EXPECT_EQ(tensor_bytes(epoch_one, frozen), tensor_bytes(head_end, frozen)) << frozen;
    EXPECT_NE(tensor_bytes(head_end, frozen), tensor_bytes(all_end, frozen)) << frozen;
  }
  EXPECT_NE(tensor_bytes(epoch_one, "layers.7.weight"), tensor_bytes(head_end, "layers.7.weight"));
}

TEST_F(Stages, KillNineAtARandomMomentThenResumeEndsBitwiseEqual) {
  std::random_device entropy;
  std::mt19937 rng(entropy());
  int moment = std::uniform_int_distribution<int>(2, 45)(rng);
  SCOPED_TRACE("killed after output line " + std::to_string(moment) + " (rerun to draw another)");
  testing::TempDir dir;
  auto [run, killed] = interrupt(train_command(dir), moment, SIGKILL);
  ASSERT_FALSE(run.empty());
  auto finish = testing::run_command(kiln() + " train --resume " + run);
  ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
  std::string a = latest_checkpoint(*straight_run_), b = latest_checkpoint(run);
  EXPECT_EQ(fs::path(a).filename(), fs::path(b).filename());
  EXPECT_TRUE(read_file(a + "/model.safetensors") == read_file(b + "/model.safetensors"))
      << "weights differ from the uninterrupted run's\n"
      << finish.out;
  EXPECT_TRUE(read_file(a + "/ema.safetensors") == read_file(b + "/ema.safetensors"));
  EXPECT_EQ(validation_rows(*straight_run_), validation_rows(run));
  Json info = Json::parse(read_file(run + "/run.json"));
  EXPECT_EQ(info["stages"][2]["end_step"], 48) << info.dump();
}

// Each moment a stage can be resumed in: mid-stage, and at each stage's end checkpoint.
TEST_F(Stages, ResumedInEachStageEndsBitwiseEqual) {
  for (const char* stop : {"stage 2/3: all", "stage 3/3: polish", "step 30 "}) {
    SCOPED_TRACE(stop);
    testing::TempDir dir;
    testing::ChildProcess child(train_command(dir));
    std::string line, run;
    while (child.read_line(line)) {
      if (line.rfind("run: ", 0) == 0) run = line.substr(5);
      if (line.find(stop) != std::string::npos) break;
    }
    child.signal(SIGKILL);
    child.wait();
    auto finish = testing::run_command(kiln() + " train --resume " + run);
    ASSERT_EQ(finish.exit_code, 0) << finish.out << finish.err;
    EXPECT_TRUE(read_file(latest_checkpoint(*straight_run_) + "/model.safetensors") ==
                read_file(latest_checkpoint(run) + "/model.safetensors"))
        << finish.out;
  }
}

TEST_F(Stages, AStageThatCannotStartFailsBeforeAnyTraining) {
  testing::TempDir dir;
  std::string config = kConfig;
  config.replace(config.find("freeze: []"), 10, "freeze: [layer1]");
  auto run = testing::run_command(train_command(dir, config));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("config error at stages[1].train.freeze[0]"));
  EXPECT_THAT(run.err, HasSubstr("(in stage 2/3: all)"));
  EXPECT_THAT(run.out, Not(HasSubstr("stage 1/3")));
  auto refused = testing::run_command(kiln() + " train " + dir.file("config.yaml") +
                                      " --dry-run --set 'stages[0].model.hidden=[8]'");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("a stage cannot change model"));
}

TEST_F(Stages, AMonitorALaterStageNeverMeasuresFailsBeforeAnyTraining) {
  testing::TempDir dir;
  std::string config = kConfig;
  config.replace(config.find("{name: polish,"), 14,
                 "{name: polish, callbacks: [{type: early_stopping, monitor: val/r2}],");
  auto run = testing::run_command(train_command(dir, config));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.err, HasSubstr("config error at stages[2].callbacks[0].monitor"));
  EXPECT_THAT(run.err, HasSubstr("\"val/r2\" is never measured"));
  EXPECT_THAT(run.err, HasSubstr("(in stage 3/3: polish)"));
  EXPECT_THAT(run.out, Not(HasSubstr("stage 1/3")));
}

TEST_F(Stages, EachStageMayRegularizeItsOwnParameters) {
  testing::TempDir dir;
  std::string config = kConfig;
  // The head stage trains layers.7 only: a penalty on the frozen hidden layers selects nothing.
  config.replace(config.find("{name: head,"), 12,
                 "{name: head, regularization: [{type: l2, weight: 0.001, params: [layers.1.*]}],");
  auto refused = testing::run_command(train_command(dir, config) + " --dry-run");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("config error at stages[0].regularization[0].params[0]"));
  EXPECT_THAT(refused.err, HasSubstr("matches only frozen parameters (layers.1.weight"));
  config = kConfig;
  config.replace(config.find("{name: all,"), 11,
                 "{name: all, regularization: [{type: l2, weight: 0.001}],");
  auto run = testing::run_command(train_command(dir, config));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::string metrics = read_file(run_dir_of(run.out) + "/metrics.csv");
  // Logged (every 2 steps) from stage 2 (steps 21 to 44) on, as stage 3 inherits it.
  std::vector<int> steps;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);)
    if (line.find(",train,regularization,") != std::string::npos) steps.push_back(std::stoi(line));
  ASSERT_FALSE(steps.empty()) << metrics;
  EXPECT_EQ(steps.front(), 22);
  EXPECT_EQ(steps.back(), 48);
}

// Stage 2 trains with another optimizer at a rate that overflows at once: the stage's first
// checkpoint (step 24) never comes, and stage 1's holds adam's state, which must not be loaded
// into sgd.
TEST_F(Stages, ARewindNeverGoesBackIntoAnEarlierStage) {
  testing::TempDir dir;
  std::string config = kConfig;
  config.replace(config.find("freeze: []}, optimizer: {type: sgd, lr: 0.05"), 44,
                 "freeze: [], on_nan: rewind}, optimizer: {type: sgd, lr: 1.0e+30");
  auto run = testing::run_command(train_command(dir, config));
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("no checkpoint of stage 2 to rewind to yet (the newest, "));
  EXPECT_THAT(run.err, HasSubstr("step-000000020, was taken in stage 1)"));
}

}  // namespace
}  // namespace kiln
