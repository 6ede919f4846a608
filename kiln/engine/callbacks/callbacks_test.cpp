// The callbacks on the trainer's tiny rig: the order of the hooks, checkpoint retention
// (keep_last and keep_best independently, checkpoints/best), early stopping with patience,
// min_delta and restore_best, EMA arithmetic and its swap for validation, lr_monitor's groups.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "kiln/engine/trainer_test_rig.h"
#include "kiln/optim/param_groups.h"
#include "tests/support/operator_counter.h"

namespace kiln::engine {
namespace callbacks_test {

using test_rig::ScriptedMetric;
using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Writes down every hook call and, after each step, the model's weights.
class Recorder : public Callback {
 public:
  void on_fit_begin(TrainerView&) override { events.push_back("fit_begin"); }
  void on_step_end(TrainerView& view, const Progress&) override {
    events.push_back("step " + std::to_string(view.progress().steps));
    weights.push_back(named_state(view.model()).at("layers.0.weight").detach().clone());
  }
  void on_validation_end(TrainerView& view, const MetricValues&) override {
    events.push_back("validation " + std::to_string(view.progress().steps));
  }
  void on_epoch_end(TrainerView&) override { events.push_back("epoch_end"); }
  void on_fit_end(TrainerView&) override { events.push_back("fit_end"); }
  std::optional<std::string> should_stop() const override {
    if (stop_after > 0 && int64_t(weights.size()) >= stop_after) return "enough";
    return std::nullopt;
  }
  std::vector<std::string> events;
  std::vector<torch::Tensor> weights;  // layers.0.weight after each step
  int64_t stop_after = 0;
};

// Validations report the scripted val/score values one after the other.
void script_val_score(TrainerRig& rig, std::vector<double> scores) {
  rig.metrics.clear();  // the tags a monitor may name are the training objective's
  rig.metrics.push_back({"score", std::make_unique<test_rig::CountingMetric>(&rig.now, 1.0)});
  rig.val_metrics.clear();
  rig.val_metrics.push_back({"score", std::make_unique<ScriptedMetric>(std::move(scores))});
}

TEST(Callbacks, HooksComeInTheLoopsOrder) {
  TrainerRig rig;  // 4 steps per epoch
  Recorder recorder;
  rig.callbacks.push_back(&recorder);
  rig.fit(train_options("2 epochs", "1 epoch", "100 steps"));
  EXPECT_THAT(
      recorder.events,
      ElementsAre("fit_begin", "step 1", "step 2", "step 3", "step 4", "validation 4", "epoch_end",
                  "step 5", "step 6", "step 7", "step 8", "validation 8", "epoch_end", "fit_end"));
}

TEST(Callbacks, AStopRequestEndsTrainingAfterThatStepAndSaysWhy) {
  TrainerRig rig;
  Recorder recorder;
  recorder.stop_after = 3;
  rig.callbacks.push_back(&recorder);
  TrainResult result = rig.fit(train_options("2 epochs", "1 epoch", "100 steps"));
  EXPECT_EQ(result.progress.steps, 3);
  EXPECT_EQ(result.stop_reason, "enough");
  // The run still ends as usual: a final validation, then fit_end.
  EXPECT_EQ(recorder.events.back(), "fit_end");
  EXPECT_THAT(rig.steps_logged("val/count"), ElementsAre(3));
}

TEST(CheckpointCallback, KeepsTheNewestAndTheBestIndependently) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  script_val_score(rig, {0.1, 0.9, 0.3, 0.2, 0.4, 0.1});
  rig.add_callback(
      "{type: checkpoint, every: 1 step, keep_last: 2, keep_best: 1, monitor: val/score, "
      "mode: max}");
  TrainOptions options = train_options("6 steps", "1 step", "100 steps");
  rig.fit(options);
  std::vector<std::string> kept;
  for (const auto& dir : checkpoint_directories(rig.checkpoints_dir))
    kept.push_back(fs::path(dir).filename().string());
  EXPECT_THAT(kept, ElementsAre("step-000000002", "step-000000005", "step-000000006"));
  EXPECT_EQ(find_checkpoint(rig.dir.path(), "best"), rig.checkpoints_dir + "/step-000000002");
  EXPECT_EQ(find_checkpoint(rig.dir.path(), "last"), rig.checkpoints_dir + "/step-000000006");
}

// A damaged checkpoint (left by a crash or a bad disk) ranks as no value: retention neither fails
// on it nor keeps it as best, and removes it as an old one, leaving no half directory behind.
TEST(CheckpointCallback, RetentionPassesOverADamagedCheckpointAndRemovesItWhole) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  fs::create_directories(rig.checkpoints_dir + "/step-000000000");
  std::ofstream(rig.checkpoints_dir + "/step-000000000/train_state.json") << "{\"step\": ";
  rig.add_callback("{type: checkpoint, every: 1 step, keep_last: 2, keep_best: 0}");
  rig.fit(train_options("4 steps", "1 step", "100 steps"));
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(rig.checkpoints_dir))
    if (entry.is_directory()) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_THAT(left, ::testing::ElementsAre("step-000000003", "step-000000004"));
}

TEST(CheckpointCallback, KeepLastZeroKeepsEveryCheckpoint) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.add_callback("{type: checkpoint, every: 2 steps, keep_last: 0, keep_best: 0}");
  rig.fit(train_options("8 steps", "4 steps", "100 steps"));
  EXPECT_EQ(checkpoint_directories(rig.checkpoints_dir).size(), 4u);
  // Still named: the best by val/loss of those kept.
  EXPECT_TRUE(fs::exists(rig.checkpoints_dir + "/best"));
}

TEST(CheckpointCallback, AMonitorNeverMeasuredIsAConfigErrorAtItsPath) {
  TrainerRig rig;
  rig.add_callback("{type: checkpoint, monitor: val/acuracy}", 2);
  try {
    rig.fit(train_options("2 steps", "1 step", "100 steps"));
    FAIL() << "an unknown monitor was accepted";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), HasSubstr("callbacks[2].monitor"));
    EXPECT_THAT(e.what(), HasSubstr("val/loss"));
  }
}

TEST(EarlyStopping, StopsAfterPatienceValidationsWithoutImprovement) {
  TrainerRig rig;
  script_val_score(rig, {0.5, 0.4, 0.45, 0.41, 0.3});
  rig.add_callback("{type: early_stopping, monitor: val/score, mode: min, patience: 2}");
  TrainResult result = rig.fit(train_options("8 steps", "1 step", "100 steps"));
  EXPECT_EQ(result.progress.steps, 4);
  EXPECT_THAT(result.stop_reason, HasSubstr("val/score has not improved on 0.4 (step 2)"));
}

TEST(EarlyStopping, ChangesSmallerThanMinDeltaDoNotCount) {
  TrainerRig rig;
  script_val_score(rig, {0.5, 0.48, 0.47, 0.2});
  rig.add_callback(
      "{type: early_stopping, monitor: val/score, mode: min, patience: 2, min_delta: 0.05}");
  TrainResult result = rig.fit(train_options("8 steps", "1 step", "100 steps"));
  EXPECT_EQ(result.progress.steps, 3);
}

TEST(EarlyStopping, RestoreBestPutsBackTheWeightsOfTheBestValidation) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  Recorder recorder;
  rig.callbacks.push_back(&recorder);
  script_val_score(rig, {0.5, 0.9, 0.6, 0.7});
  rig.add_callback(
      "{type: early_stopping, monitor: val/score, mode: max, patience: 2, restore_best: true}", 1);
  TrainResult result = rig.fit(train_options("8 steps", "1 step", "100 steps"));
  ASSERT_EQ(result.progress.steps, 4);
  torch::Tensor final_weight = named_state(*rig.model).at("layers.0.weight");
  EXPECT_TRUE(torch::equal(final_weight, recorder.weights[1]));  // after step 2
  EXPECT_FALSE(torch::equal(final_weight, recorder.weights[3]));
  // The final checkpoint holds the restored weights, not the ones it had at step 4.
  test_rig::TrainerRig reloaded;
  load_model_weights(result.checkpoint, *reloaded.model);
  EXPECT_TRUE(torch::equal(named_state(*reloaded.model).at("layers.0.weight"), final_weight));
}

TEST(Ema, AveragesTheWeightsAfterEveryStep) {
  TrainerRig rig;
  Recorder recorder;
  rig.callbacks.push_back(&recorder);
  torch::Tensor initial = named_state(*rig.model).at("layers.0.weight").detach().clone();
  Callback* ema = rig.add_callback("{type: ema, decay: 0.5, warmup: false}", 1);
  rig.fit(train_options("2 steps", "100 steps", "100 steps"));
  torch::Tensor expected = 0.25 * initial + 0.25 * recorder.weights[0] + 0.5 * recorder.weights[1];
  EXPECT_TRUE(torch::allclose(ema->evaluation_weights()->at("layers.0.weight"), expected));
  // The raw weights keep training.
  EXPECT_TRUE(torch::equal(named_state(*rig.model).at("layers.0.weight"), recorder.weights[1]));
}

// Turns an operator counter on or off as each step ends: around another callback, it counts what
// that callback dispatches.
struct CounterSwitch : Callback {
  CounterSwitch(kiln::testing::OperatorCounter& counter, bool on) : counter(counter), on(on) {}
  void on_step_end(TrainerView&, const Progress&) override { counter.enable(on); }
  kiln::testing::OperatorCounter& counter;
  bool on;
};

TEST(Ema, UpdatesTheWholeAverageWithOneMultiTensorUpdatePerStep) {
  TrainerRig rig;
  kiln::testing::OperatorCounter counter;
  counter.enable(false);
  CounterSwitch on(counter, true), off(counter, false);
  rig.callbacks.push_back(&on);
  rig.add_callback("{type: ema, decay: 0.5, warmup: false}", 1);
  rig.callbacks.push_back(&off);
  rig.fit(train_options("3 steps", "100 steps", "100 steps"));
  EXPECT_EQ(counter.count("aten::_foreach_mul_"), 3);
  EXPECT_EQ(counter.count("aten::_foreach_add_"), 3);
}

TEST(Ema, WarmUpStartsWithALowDecay) {
  TrainerRig rig;
  Recorder recorder;
  rig.callbacks.push_back(&recorder);
  torch::Tensor initial = named_state(*rig.model).at("layers.0.weight").detach().clone();
  Callback* ema = rig.add_callback("{type: ema, decay: 0.999}", 1);
  rig.fit(train_options("1 step", "100 steps", "100 steps"));
  double decay = 2.0 / 11.0;  // min(0.999, (1 + 1) / (10 + 1))
  torch::Tensor expected = decay * initial + (1 - decay) * recorder.weights[0];
  EXPECT_TRUE(torch::allclose(ema->evaluation_weights()->at("layers.0.weight"), expected));
}

TEST(Ema, ValidationEvaluatesTheAverageAndTrainingKeepsTheRawWeights) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.val_metrics.clear();
  Callback* ema = rig.add_callback("{type: ema, decay: 0.9, warmup: false}");
  TrainResult result = rig.fit(train_options("4 steps", "4 steps", "100 steps"));
  double logged = result.last.at("val/loss");
  Objective objective(test_rig::single_head(
      losses::loss_registry().create(read_spec("loss", "cross_entropy")), {}));
  auto loss_with = [&](const NamedTensors* weights) {
    SwappedWeights swapped(*rig.model, weights);
    return evaluate(*rig.model, *rig.val, objective, torch::kCPU, "val").at("val/loss");
  };
  EXPECT_DOUBLE_EQ(loss_with(ema->evaluation_weights()), logged);
  EXPECT_NE(loss_with(nullptr), logged);
  // The checkpoint keeps the raw weights as model.safetensors and the average beside them;
  // evaluation and export load the average.
  TrainerRig reloaded;
  load_model_weights(result.checkpoint, *reloaded.model);
  EXPECT_TRUE(torch::equal(named_state(*reloaded.model).at("layers.0.weight"),
                           named_state(*rig.model).at("layers.0.weight")));
  EXPECT_EQ(load_evaluation_weights(result.checkpoint, *reloaded.model),
            result.checkpoint + "/ema.safetensors");
  EXPECT_TRUE(torch::equal(named_state(*reloaded.model).at("layers.0.weight"),
                           ema->evaluation_weights()->at("layers.0.weight")));
}

TEST(LrMonitor, LogsEveryParameterGroupsRate) {
  TrainerRig rig;
  rig.optimizer = optim::build_grouped_optimizer(read_spec("optimizer", "{type: sgd, lr: 0.1}"),
                                                 rig.model->named_parameters(), {{"*.bias", 0.5}},
                                                 "train.lr_scales");
  rig.add_callback("{type: lr_monitor, every: 2 steps}");
  rig.fit(train_options("4 steps", "100 steps", "100 steps"));
  EXPECT_THAT(rig.steps_logged("train/lr/group0"), ElementsAre(2, 4));
  EXPECT_THAT(rig.values_logged("train/lr/group0"), ElementsAre(0.1, 0.1));
  EXPECT_THAT(rig.values_logged("train/lr/group1"), ElementsAre(0.05, 0.05));
}

}  // namespace callbacks_test
}  // namespace kiln::engine
