// End-to-end: `kiln bench` prints each layer's cost for a config (and --json, with exact
// parameter and activation sizes), and `train.profile` writes RUN/trace.json, a Chrome trace of
// the steps it names; windows that cannot be are config errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "kiln/core/json.h"
#include "tests/support/run_command.h"
#include "tests/support/run_files.h"
#include "tests/support/temp_dir.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

std::string kiln(const std::string& args) { return std::string(KILN_BINARY) + " " + args; }

// A convolution (1 -> 8 channels, 3x3: 80 parameters) over 28x28 images, 8 steps per epoch.
constexpr const char* kConfig = R"(
version: 1
name: profiled
seed: 3
data:
  train: {type: fashion_mnist, split: train, limit: 256}
  val: {type: fashion_mnist, split: test, limit: 64}
  batch_size: 32
model:
  type: sequential
  layers: [{type: conv2d, out: 8, kernel: 3, padding: same}, relu, flatten, {type: linear, out: 10}]
optimizer: {type: adam, lr: 0.001}
train: {max: 1 epoch, validate_every: 1 epoch, log_every: 4 steps}
runtime: {device: cpu, threads: 1}
)";

const Json* layer_of_type(const Json& layers, const std::string& type) {
  for (const auto& layer : layers)
    if (layer["type"] == type) return &layer;
  return nullptr;
}

TEST(Bench, PrintsEachLayersCostOfATrainingStep) {
  testing::TempDir dir;
  std::string config = dir.write("profiled.yaml", kConfig);
  auto table =
      testing::run_command(kiln("bench " + config + " --steps 3 --warmup 1 --pipeline-batches 4"));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("3 training steps of batch 32 on cpu (1 thread)"));
  EXPECT_THAT(table.out, HasSubstr("forward ms"));
  EXPECT_THAT(table.out, HasSubstr("Conv2d"));
  EXPECT_THAT(table.out, HasSubstr("784.0 KiB"));  // [32, 8, 28, 28] floats: 802,816 bytes
  EXPECT_THAT(table.out, HasSubstr("examples/s; data"));
  EXPECT_THAT(table.out, HasSubstr("input pipeline alone:"));
  EXPECT_THAT(table.out, HasSubstr("(4 batches)"));
  EXPECT_THAT(table.out, HasSubstr("peak memory:"));

  auto json = testing::run_command(kiln("bench " + config + " --steps 2 --warmup 0 --json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  Json cost = Json::parse(json.out);
  EXPECT_EQ(cost["steps"], 2);
  EXPECT_EQ(cost["batch_size"], 32);
  const Json* conv = layer_of_type(cost["layers"], "Conv2d");
  ASSERT_NE(conv, nullptr) << json.out;
  EXPECT_EQ((*conv)["parameters"], 80);
  EXPECT_EQ((*conv)["activation_bytes"], 32 * 8 * 28 * 28 * 4);
  EXPECT_GT((*conv)["forward_ms"].get<double>(), 0);
  EXPECT_GT((*conv)["backward_ms"].get<double>(), 0);
  const Json* linear = layer_of_type(cost["layers"], "Linear");
  ASSERT_NE(linear, nullptr);
  EXPECT_EQ((*linear)["parameters"], 8 * 28 * 28 * 10 + 10);
  for (const char* phase : {"data_ms", "forward_ms", "backward_ms", "optimizer_ms"})
    EXPECT_GT(cost["phases"][phase].get<double>(), 0) << phase;
  EXPECT_GT(cost["step_ms"].get<double>(), 0);
  EXPECT_GT(cost["pipeline"]["examples_per_s"].get<double>(), 0);
  EXPECT_GT(cost["peak_rss_mb"].get<double>(), 0);
}

TEST(Bench, RefusesANonPositiveStepCount) {
  testing::TempDir dir;
  auto result = testing::run_command(kiln("bench " + dir.write("p.yaml", kConfig) + " --steps 0"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--steps"));
}

TEST(TrainProfile, WritesAChromeTraceOfTheStepsItNames) {
  testing::TempDir dir;
  std::string config = dir.write("profiled.yaml", kConfig);
  auto result = testing::run_command(kiln("train " + config + " --runs-root " + dir.file("runs") +
                                          " --set train.profile.from=3 --set train.profile.to=4"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::string run = testing::run_dir_of(result.out);
  EXPECT_THAT(result.out, HasSubstr("profile of steps 3 to 4: " + run + "/trace.json"));
  Json trace = Json::parse(testing::read_file(run + "/trace.json"));
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  std::set<std::string> steps, phases, layers_forward, layers_backward, threads;
  for (const auto& event : trace["traceEvents"]) {
    ASSERT_TRUE(event.contains("ph") && event.contains("pid") && event.contains("tid")) << event;
    if (event["ph"] == "M") {
      threads.insert(event["args"]["name"].get<std::string>());
      continue;
    }
    ASSERT_EQ(event["ph"], "X") << event;
    ASSERT_TRUE(event["ts"].is_number() && event["dur"].is_number()) << event;
    EXPECT_GE(event["ts"].get<double>(), 0);
    EXPECT_GE(event["dur"].get<double>(), 0);
    std::string name = event["name"], category = event["cat"];
    if (category == "step") steps.insert(name);
    if (category == "phase") phases.insert(name);
    if (category == "layer forward") layers_forward.insert(name);
    if (category == "layer backward") layers_backward.insert(name);
  }
  EXPECT_EQ(steps, (std::set<std::string>{"step 3", "step 4"}));
  EXPECT_EQ(phases,
            (std::set<std::string>{"data", "forward", "backward", "optimizer", "callbacks"}));
  // The stack the network calls, and its conv, relu, flatten and linear layers.
  EXPECT_EQ(layers_forward,
            (std::set<std::string>{"layers", "layers.0", "layers.1", "layers.2", "layers.3"}));
  EXPECT_FALSE(layers_backward.empty());
  EXPECT_TRUE(threads.count("training step") && threads.count("backward by layer"));
}

TEST(TrainProfile, AnEmptyOrMisplacedWindowIsAConfigError) {
  testing::TempDir dir;
  std::string config = dir.write("profiled.yaml", kConfig);
  auto reversed =
      testing::run_command(kiln("train " + config + " --runs-root " + dir.file("runs") +
                                " --set train.profile.from=5 --set train.profile.to=2"));
  EXPECT_EQ(reversed.exit_code, 2);
  EXPECT_THAT(reversed.err, HasSubstr("train.profile.to"));
  EXPECT_THAT(reversed.err, HasSubstr("before train.profile.from (5)"));
  auto zero = testing::run_command(
      kiln("train " + config + " --runs-root " + dir.file("runs") + " --set train.profile.from=0"));
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_THAT(zero.err, HasSubstr("train.profile.from"));
}

}  // namespace
}  // namespace kiln
