// End-to-end: the kiln binary trains on a small Fashion-MNIST subset, writes the run directory of
// docs/design.md §6, and evaluates it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kiln/core/json.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;
namespace fs = std::filesystem;

constexpr const char* kTinyConfig = R"(
version: 1
name: tiny
seed: 3
data:
  train: {type: fashion_mnist, split: train, limit: 512}
  val: {type: fashion_mnist, split: test, limit: 256}
  test: {type: fashion_mnist, split: test, limit: 256}
  batch_size: 32
  transforms:
    train: [{type: normalize, mean: 0.286, std: 0.353}]
    eval: [{type: normalize, mean: 0.286, std: 0.353}]
model:
  type: sequential
  layers: [flatten, {type: linear, out: 64}, relu, {type: linear, out: 10}]
optimizer: {type: sgd, lr: 0.05, momentum: 0.9}
train: {max: 30 steps, validate_every: 15 steps, log_every: 10 steps, monitor: val/accuracy, mode: max}
runtime: {threads: 1}
)";

std::string slurp(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

class TrainEvalTest : public ::testing::Test {
 protected:
  std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }
  // Trains the tiny config and returns the run directory it printed first.
  std::string train(const std::string& config_text = kTinyConfig) {
    std::string config = dir_.write("tiny.yaml", config_text);
    auto result =
        testing::run_command(kiln("train " + config + " --runs-root " + dir_.file("runs")));
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_THAT(result.out, StartsWith("run: "));
    std::string first_line = result.out.substr(0, result.out.find('\n'));
    return first_line.substr(5);
  }
  testing::TempDir dir_;
};

TEST_F(TrainEvalTest, TrainWritesTheRunDirectory) {
  std::string run = train();
  EXPECT_THAT(run, StartsWith(dir_.file("runs/tiny/")));
  for (const char* file : {"config.yaml", "run.json", "metrics.csv", "summary.json", "train.log"})
    EXPECT_TRUE(fs::exists(run + "/" + file)) << file;

  Json info = Json::parse(slurp(run + "/run.json"));
  EXPECT_EQ(info["status"], "finished");
  EXPECT_EQ(info["world_size"], 1);

  Json summary = Json::parse(slurp(run + "/summary.json"));
  EXPECT_EQ(summary["steps"], 30);
  EXPECT_EQ(summary["best"]["metric"], "val/accuracy");
  double accuracy = summary["final"]["val/accuracy"];
  EXPECT_GT(accuracy, 0.3);  // chance is 0.1; 30 steps of SGD learn far more than that
  EXPECT_LE(accuracy, 1.0);

  std::string metrics = slurp(run + "/metrics.csv");
  EXPECT_THAT(metrics, StartsWith("step,epoch,split,metric,value,wall_time\n"));
  EXPECT_THAT(metrics, HasSubstr("\n15,"));  // validation at step 15
  EXPECT_THAT(metrics, HasSubstr(",val,accuracy,"));
  EXPECT_THAT(metrics, HasSubstr(",train,loss,"));

  std::string latest = slurp(run + "/checkpoints/latest");
  EXPECT_EQ(latest, "step-000000030\n");
  for (const char* file :
       {"model.safetensors", "optimizer.pt", "train_state.json", "config.yaml", "MANIFEST"})
    EXPECT_TRUE(fs::exists(run + "/checkpoints/step-000000030/" + file)) << file;
  // The resolved config carries every default.
  EXPECT_THAT(slurp(run + "/config.yaml"), HasSubstr("eval_batch_size: 0"));
}

// Where training time went, as shares of it, and the process's peak memory, every log line.
TEST_F(TrainEvalTest, TrainLogsTimeSharesAndPeakMemory) {
  std::string run = train();
  std::istringstream rows(slurp(run + "/metrics.csv"));
  std::map<std::string, double> shares;
  double peak_mb = 0;
  for (std::string line; std::getline(rows, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (cells.size() < 5 || cells[0] != "30") continue;  // the last log line
    if (cells[2] == "train" && cells[3].rfind("time/", 0) == 0)
      shares[cells[3]] = std::stod(cells[4]);
    if (cells[2] == "system" && cells[3] == "peak_rss_mb") peak_mb = std::stod(cells[4]);
  }
  double total = 0;
  for (const char* part :
       {"time/data", "time/forward", "time/backward", "time/optimizer", "time/callbacks"}) {
    ASSERT_TRUE(shares.count(part)) << part;
    EXPECT_GE(shares[part], 0) << part;
    total += shares[part];
  }
  EXPECT_GT(shares["time/forward"] + shares["time/backward"], 0.05);
  EXPECT_LE(total, 1.0 + 1e-9);
  EXPECT_GT(peak_mb, 50) << "LibTorch alone takes more";
  EXPECT_LT(peak_mb, 8192);
}

TEST_F(TrainEvalTest, QuietPrintsOnlyTheRunLine) {
  std::string config = dir_.write("tiny.yaml", kTinyConfig);
  auto result = testing::run_command(
      kiln("train " + config + " --runs-root " + dir_.file("runs") + " --quiet"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, MatchesRegex("run: [^\n]*\n"));
  std::string run = result.out.substr(5, result.out.size() - 6);
  EXPECT_THAT(slurp(run + "/train.log"), HasSubstr("validation at step 30"));
}

TEST_F(TrainEvalTest, EvalPrintsOneJsonObject) {
  std::string run = train();
  auto result = testing::run_command(kiln("eval " + run + " --split test --json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  Json values = Json::parse(result.out);
  ASSERT_EQ(values.size(), 2u) << result.out;
  EXPECT_GT(values["test/accuracy"].get<double>(), 0.3);
  EXPECT_GT(values["test/loss"].get<double>(), 0.0);
  // How many examples, in how long, on stderr.
  EXPECT_THAT(result.err, MatchesRegex("test: 256 examples in [0-9.]+ s, [0-9]+ examples/s\n"));
}

TEST_F(TrainEvalTest, EvalOfTheSameCheckpointIsReproducible) {
  std::string run = train();
  auto first = testing::run_command(kiln("eval " + run + " --split val --json"));
  auto second = testing::run_command(kiln("eval " + run + " --split val --json --checkpoint best"));
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, second.out);  // no best pointer yet, so best falls back to the last
  // The final validation during training saw the same weights and data.
  Json summary = Json::parse(slurp(run + "/summary.json"));
  EXPECT_NEAR(Json::parse(first.out)["val/accuracy"].get<double>(),
              summary["final"]["val/accuracy"].get<double>(), 1e-9);
}

TEST_F(TrainEvalTest, CorruptCheckpointIsRefused) {
  std::string run = train();
  std::string weights = run + "/checkpoints/step-000000030/model.safetensors";
  std::fstream file(weights, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(-3, std::ios::end);
  file.put('\x7f');
  file.close();
  auto result = testing::run_command(kiln("eval " + run + " --json"));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("model.safetensors"));
  EXPECT_THAT(result.err, HasSubstr("corrupt"));
}

TEST_F(TrainEvalTest, EvalOfAMissingSplitNamesTheSplits) {
  std::string config = kTinyConfig;
  config.erase(config.find("  test:"), config.find("  batch_size") - config.find("  test:"));
  std::string run = train(config);
  auto result = testing::run_command(kiln("eval " + run + " --split test --json"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("no \"test\" split"));
  EXPECT_THAT(result.err, HasSubstr("train, val"));
}

TEST_F(TrainEvalTest, AValidationSplitCarvedFromTrainingIsUsed) {
  std::string config = kTinyConfig;
  size_t val = config.find("  val:");
  config.replace(val, config.find('\n', val) + 1 - val, "  val_fraction: 0.25\n");
  std::string run = train(config);
  EXPECT_THAT(slurp(run + "/train.log"), HasSubstr("384 training examples"));  // 512 - 128
  EXPECT_THAT(slurp(run + "/metrics.csv"), HasSubstr(",val,accuracy,"));
  auto result = testing::run_command(kiln("eval " + run + " --split val --json"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NEAR(Json::parse(result.out)["val/accuracy"].get<double>(),
              Json::parse(slurp(run + "/summary.json"))["final"]["val/accuracy"].get<double>(),
              1e-9);
}

TEST_F(TrainEvalTest, AValidationSplitAndAFractionTogetherAreAConfigError) {
  std::string config = dir_.write("both.yaml", kTinyConfig);
  auto result =
      testing::run_command(kiln("train " + config + " --set data.val_fraction=0.1 --dry-run"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("data.val_fraction"));
  EXPECT_THAT(result.err, HasSubstr("not both"));
}

TEST_F(TrainEvalTest, EvalOfANonRunIsAUsageError) {
  auto result = testing::run_command(kiln("eval " + dir_.path() + " --json"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("not a run directory"));
}

TEST_F(TrainEvalTest, ARunDirectoryGivenByTheCommandOrALauncherIsUsedAsIs) {
  std::string config = dir_.write("tiny.yaml", kTinyConfig);
  std::string run = dir_.file("chosen/run");
  auto given = testing::run_command(
      kiln("train " + config + " --run-dir " + run + " --set 'train.max=2 steps'"));
  ASSERT_EQ(given.exit_code, 0) << given.err;
  EXPECT_THAT(given.out, StartsWith("run: " + run + "\n"));
  EXPECT_TRUE(fs::exists(run + "/config.yaml"));
  // KILN_RUN_DIR (a launcher's) names the same folder, which already holds a run: refused.
  auto again = testing::run_command("KILN_RUN_DIR=" + run + " " + kiln("train " + config));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.err, HasSubstr("already holds a run"));
}

}  // namespace
}  // namespace kiln
