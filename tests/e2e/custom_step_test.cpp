// End-to-end: models written in PyTorch (`model: {type: torchscript}`) and the `custom` loop,
// whose training step is the scripted module's training_step. tests/golden/custom_step holds the
// modules, the data and the loss of every step PyTorch computed in eager mode from the same
// weights on the same rows (make_custom_step.py): kiln follows that curve in both loops, resumes
// bitwise after SIGKILL, trains on two processes, exports the module as a TorchScript version
// that serves, and refuses a module it cannot train before any step, naming the config path.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/resume_check.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace custom_step_test {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

std::string kiln() { return KILN_BINARY; }
std::string golden(const std::string& file) {
  return std::string(KILN_SOURCE_DIR) + "/tests/golden/custom_step/" + file;
}

// The settings make_custom_step.py trained with: 96 rows in file order, batches of 16, five
// epochs of SGD with momentum; a loss logged every step.
std::string config(const std::string& loop, const std::string& module = "step.pt") {
  std::string data = golden("data.csv");
  return "version: 1\nname: scripted\nseed: 1\n"
         "data:\n"
         "  train: {type: csv, file: " +
         data + ", features: [a, b, c, d], target: label}\n" + "  val: {type: csv, file: " + data +
         ", features: [a, b, c, d], target: label}\n"
         "  batch_size: 16\n  shuffle: false\n"
         "model: {type: torchscript, file: " +
         golden(module) + ", output: logits}\nloop: " + loop +
         "\n"
         "optimizer: {type: sgd, lr: 0.1, momentum: 0.9}\n"
         "train: {max: 5 epochs, log_every: 1 step, validate_every: 1 epoch, deterministic: true}\n"
         "callbacks: [{type: checkpoint, every: 1 epoch, keep_last: 2}]\n"
         "runtime: {threads: 1}\n";
}

std::string train(const testing::TempDir& dir, const std::string& loop,
                  const std::string& flags = "") {
  return kiln() + " train " + dir.write("scripted.yaml", config(loop)) + " --runs-root " +
         dir.file("runs") + " " + flags;
}

// metrics.csv's values of `split`/`metric`, in step order.
std::vector<double> logged(const std::string& run, const std::string& split,
                           const std::string& metric) {
  std::istringstream rows(testing::read_file(run + "/metrics.csv"));
  std::vector<double> values;
  std::string line;
  std::string key = "," + split + "," + metric + ",";
  while (std::getline(rows, line)) {
    size_t at = line.find(key);
    if (at != std::string::npos) values.push_back(std::stod(line.substr(at + key.size())));
  }
  return values;
}

void expect_pytorchs_curve(const std::string& run) {
  Json expected = Json::parse(testing::read_file(golden("expected.json")));
  std::vector<double> losses = logged(run, "train", "loss");
  ASSERT_EQ(losses.size(), expected["losses"].size());
  for (size_t step = 0; step < losses.size(); ++step) {
    double want = expected["losses"][step].get<double>();
    EXPECT_LE(std::abs(losses[step] - want), 1e-4 * std::abs(want)) << "step " << step + 1;
  }
}

TEST(CustomStep, FollowsTheLossCurvePyTorchComputesForTheSameModule) {
  testing::TempDir dir;
  auto run = testing::run_command(train(dir, "custom"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string folder = testing::run_dir_of(run.out);
  expect_pytorchs_curve(folder);
  // training_step's other value, and validation_step's, logged beside the loss.
  EXPECT_EQ(logged(folder, "train", "accuracy").size(), 30u);
  EXPECT_EQ(logged(folder, "val", "accuracy").size(), 5u);
  EXPECT_TRUE(fs::exists(folder + "/module.pt"));
}

TEST(CustomStep, AScriptedModelTrainsInTheSupervisedLoopAsInPyTorch) {
  testing::TempDir dir;
  auto run = testing::run_command(train(dir, "supervised"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // The config's loss (cross_entropy) is training_step's: the same curve.
  expect_pytorchs_curve(testing::run_dir_of(run.out));
}

TEST(CustomStep, KilledAndResumedEndsBitwiseEqual) {
  testing::TempDir straight_dir, killed_dir;
  // Killed after the 20th line of output (past the first epochs' checkpoints). optimizer.pt
  // is left out: LibTorch keys its state by the tensors' addresses in memory.
  testing::expect_resumed_as_straight(kiln(), train(straight_dir, "custom"),
                                      train(killed_dir, "custom"), 20, {"model.safetensors"});
}

TEST(CustomStep, TrainsOnTwoProcesses) {
  testing::TempDir dir;
  auto run = testing::run_command(kiln() + " launch --nproc 2 -- train " +
                                  dir.write("scripted.yaml", config("custom")) + " --runs-root " +
                                  dir.file("runs"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("[rank 1]"));
  fs::path runs = dir.file("runs/scripted");
  ASSERT_TRUE(fs::is_directory(runs));
  std::string folder = fs::directory_iterator(runs)->path().string();
  EXPECT_EQ(logged(folder, "val", "accuracy").size(), 5u);
}

TEST(CustomStep, ExportsTheModuleAsATorchScriptVersionThatServes) {
  testing::TempDir dir;
  auto run = testing::run_command(train(dir, "custom"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::string folder = testing::run_dir_of(run.out);
  auto exported = testing::run_command(kiln() + " export " + folder + " --to " + dir.file("x"));
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  std::string version = dir.file("x/scripted/1");
  EXPECT_TRUE(fs::exists(version + "/model.pt"));
  EXPECT_FALSE(fs::exists(version + "/model.safetensors"));
  EXPECT_THAT(testing::read_file(version + "/model.yaml"), HasSubstr("format: torchscript"));
  // The version answers as the run itself does.
  auto served =
      testing::run_command(kiln() + " predict " + version + " --input " + golden("data.csv"));
  auto direct =
      testing::run_command(kiln() + " predict " + folder + " --input " + golden("data.csv"));
  ASSERT_EQ(served.exit_code, 0) << served.err;
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  std::vector<Json> a = testing::json_lines(served.out), b = testing::json_lines(direct.out);
  ASSERT_EQ(a.size(), 96u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t row = 0; row < a.size(); ++row) {
    EXPECT_EQ(a[row]["class_ids"], b[row]["class_ids"]) << row;
    for (size_t k = 0; k < 3; ++k)
      EXPECT_NEAR(a[row]["logits"][k].get<double>(), b[row]["logits"][k].get<double>(), 1e-5);
  }
  auto onnx =
      testing::run_command(kiln() + " export " + folder + " --format onnx --to " + dir.file("y"));
  EXPECT_NE(onnx.exit_code, 0);
  EXPECT_THAT(onnx.err, HasSubstr("exported as TorchScript"));
}

// A model written in PyTorch, exported as TorchScript, teaches a student of kiln's layers.
TEST(CustomStep, ItsTorchScriptExportTeachesAStudent) {
  testing::TempDir dir;
  auto run = testing::run_command(train(dir, "custom"));
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto exported = testing::run_command(kiln() + " export " + testing::run_dir_of(run.out) +
                                       " --to " + dir.file("x"));
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  std::string student = config("{type: distillation, teacher: " + dir.file("x/scripted") +
                               ", alpha: 0.5, temperature: 2}");
  student.replace(student.find("model: {"),
                  student.find('\n', student.find("model: {")) - student.find("model: {"),
                  "model: {type: mlp, num_classes: 3, hidden: [8]}");
  auto distilled = testing::run_command(kiln() + " train " + dir.write("student.yaml", student) +
                                        " --runs-root " + dir.file("students"));
  ASSERT_EQ(distilled.exit_code, 0) << distilled.out << distilled.err;
  std::string folder = testing::run_dir_of(distilled.out);
  EXPECT_EQ(logged(folder, "train", "distillation/soft_loss").size(), 30u);
  EXPECT_GT(logged(folder, "val", "accuracy").back(), 0.9);
}

// Each config fails before any training step, naming the config path and what is wrong.
TEST(CustomStep, AModuleKilnCannotTrainFailsBeforeTraining) {
  testing::TempDir dir;
  fs::copy_file(golden("data.csv"), dir.file("not_a_module.pt"));
  struct Case {
    std::string flags, says;
  };
  const Case cases[] = {
      {"--set model.file=" + golden("no_step.pt"),
       "config error at model.file: " + golden("no_step.pt") + ": the module has no training_step"},
      {"--set model.file=" + golden("pair.pt"), "forward returns (Tensor, Tensor)"},
      {"--set model.file=" + dir.file("nowhere.pt"), "nowhere.pt: missing"},
      {"--set model.file=" + dir.file("not_a_module.pt"), "is not a TorchScript model"},
      {"--set 'model={type: mlp, num_classes: 3}'",
       "config error at loop: the custom loop runs the model's training_step"},
  };
  int index = 0;
  for (const Case& c : cases) {
    auto run = testing::run_command(kiln() + " train " +
                                    dir.write("scripted.yaml", config("custom")) + " --runs-root " +
                                    dir.file("runs" + std::to_string(index++)) + " " + c.flags);
    EXPECT_NE(run.exit_code, 0) << c.flags;
    EXPECT_THAT(run.err, HasSubstr(c.says)) << c.flags;
    EXPECT_THAT(run.out, Not(HasSubstr("step 1 "))) << c.flags << ": it trained";
  }
}

}  // namespace custom_step_test
}  // namespace kiln
