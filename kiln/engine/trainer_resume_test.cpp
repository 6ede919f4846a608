// Resuming on the trainer's rig: N steps straight and N/2 + checkpoint + a new trainer resumed
// from it + N/2 give bitwise-equal weights, optimizer momentum and EMA; a stop signal ends
// training after the current step with a checkpoint of that step; a TrainState survives JSON
// and a damaged or truncated one is an error naming its file and key or offset.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/core/text_file.h"
#include "kiln/engine/train_state.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace trainer_resume_test {

using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kMomentumSgd = "{type: sgd, lr: 0.1, momentum: 0.9}";

// A rig whose model starts from the same weights every time.
std::unique_ptr<TrainerRig> seeded_rig() {
  torch::manual_seed(7);
  auto rig = std::make_unique<TrainerRig>(8, 6, kMomentumSgd);
  rig->add_callback("{type: ema, decay: 0.9}");
  return rig;
}

TEST(TrainerResume, HalfThenResumeEqualsStraightBitwise) {
  auto straight = seeded_rig();
  TrainResult expected = straight->fit(train_options("3 epochs", "1 epoch", "1 step"));

  auto first_half = seeded_rig();
  first_half->checkpoints_dir = first_half->dir.file("checkpoints");
  // 5 of the 12 steps: the checkpoint falls inside the second epoch.
  TrainResult half = first_half->fit(train_options("5 steps", "1 epoch", "1 step"));
  ASSERT_EQ(half.data_position, (data::LoaderPosition{1, 1}));

  auto second_half = seeded_rig();
  second_half->resume_from = half.checkpoint;
  TrainResult resumed = second_half->fit(train_options("3 epochs", "1 epoch", "1 step"));

  EXPECT_EQ(resumed.progress.steps, 12);
  EXPECT_DOUBLE_EQ(resumed.progress.epochs, 3.0);
  EXPECT_EQ(resumed.progress.samples, expected.progress.samples);
  for (const auto& [name, tensor] : named_state(*straight->model))
    EXPECT_TRUE(torch::equal(tensor, named_state(*second_half->model).at(name))) << name;
  const NamedTensors* straight_ema = straight->callbacks[0]->evaluation_weights();
  const NamedTensors* resumed_ema = second_half->callbacks[0]->evaluation_weights();
  for (const auto& [name, tensor] : *straight_ema)
    EXPECT_TRUE(torch::equal(tensor, resumed_ema->at(name))) << name;
  // The resumed run logs the steps after the checkpoint only, with the same losses.
  EXPECT_THAT(second_half->steps_logged("val/loss"), ElementsAre(8, 12));
  std::vector<double> straight_losses = straight->values_logged("val/loss");
  EXPECT_EQ(second_half->values_logged("val/loss"),
            std::vector<double>(straight_losses.begin() + 1, straight_losses.end()));
}

// Raises signal 2 as step 3 ends.
struct SignalAtStep : Callback {
  std::atomic<int>* flag;
  void on_step_end(TrainerView& view, const Progress&) override {
    if (view.progress().steps == 3) flag->store(2);
  }
};

TEST(TrainerResume, AStopSignalEndsTheStepSavesItAndSkipsTheFinalValidation) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  std::atomic<int> signal{15};
  rig.stop_signal = &signal;
  TrainResult result = rig.fit(train_options("2 epochs", "1 epoch", "100 steps"));
  EXPECT_EQ(result.stopped_by_signal, 15);
  EXPECT_EQ(result.progress.steps, 0);  // asked before the first step: none is taken
  TrainerRig second;
  second.checkpoints_dir = second.dir.file("checkpoints");
  std::atomic<int> later{0};
  second.stop_signal = &later;
  SignalAtStep trigger;
  trigger.flag = &later;
  second.callbacks.push_back(&trigger);
  TrainResult stopped = second.fit(train_options("2 epochs", "1 epoch", "100 steps"));
  EXPECT_EQ(stopped.stopped_by_signal, 2);
  EXPECT_EQ(stopped.progress.steps, 3);
  EXPECT_EQ(stopped.checkpoint, second.checkpoints_dir + "/step-000000003");
  EXPECT_TRUE(second.steps_logged("val/count").empty());
}

// A run stopped by a signal is resumed: the steps since the last log line are not logged at the
// stop, so that the resumed run's curves have the points an uninterrupted run's have.
TEST(TrainerResume, AStopSignalLogsNoPointBetweenLogLines) {
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  std::atomic<int> flag{0};
  rig.stop_signal = &flag;
  SignalAtStep trigger;
  trigger.flag = &flag;
  rig.callbacks.push_back(&trigger);
  TrainResult stopped = rig.fit(train_options("2 epochs", "1 epoch", "2 steps"));
  EXPECT_EQ(stopped.progress.steps, 3);
  EXPECT_THAT(rig.steps_logged("train/loss"), ElementsAre(2));
}

TEST(TrainState, SurvivesJson) {
  TrainState state;
  state.progress = {42, 1.5, 840, 12.25};
  state.data = {1, 3};
  state.validated = true;
  state.best = BestValue{"val/accuracy", 0.93, 40};
  state.last = {{"val/accuracy", 0.91}, {"train/loss", 0.3}};
  state.callbacks = {{"ema", {{"updates", 42}}}};
  state.rng = capture_rng();
  TrainState back = train_state_from_json(Json::parse(to_json(state).dump()), "t.json");
  EXPECT_EQ(back.progress.steps, 42);
  EXPECT_EQ(back.progress.epochs, 1.5);
  EXPECT_EQ(back.progress.samples, 840);
  EXPECT_EQ(back.progress.seconds, 12.25);
  EXPECT_EQ(back.data, (data::LoaderPosition{1, 3}));
  EXPECT_TRUE(back.validated);
  ASSERT_TRUE(back.best);
  EXPECT_EQ(back.best->value, 0.93);
  EXPECT_EQ(back.last, state.last);
  EXPECT_EQ(back.callbacks, state.callbacks);
  EXPECT_EQ(back.rng, state.rng);
}

TEST(TrainState, KeepsNanAndInfiniteValuesThatJsonCannotHold) {
  TrainState state;
  double inf = std::numeric_limits<double>::infinity();
  state.last = {{"val/roc_auc", std::nan("")}, {"train/loss", inf}, {"train/x", -inf}};
  state.best = BestValue{"val/loss", inf, 3};  // a first best may be infinite
  TrainState back = train_state_from_json(Json::parse(to_json(state).dump()), "t.json");
  ASSERT_TRUE(back.best);
  EXPECT_EQ(back.best->value, inf);
  EXPECT_TRUE(std::isnan(back.last.at("val/roc_auc")));
  EXPECT_EQ(back.last.at("train/loss"), inf);
  EXPECT_EQ(back.last.at("train/x"), -inf);
  Json older = to_json(state);
  older["last"]["val/roc_auc"] = nullptr;  // how NaN was written before
  EXPECT_TRUE(std::isnan(train_state_from_json(older, "t.json").last.at("val/roc_auc")));
  older["last"]["val/roc_auc"] = "high";
  try {
    train_state_from_json(older, "ckpt/train_state.json");
    FAIL() << "a word was read as a value";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ckpt/train_state.json"));
    EXPECT_THAT(e.what(), HasSubstr("\"last\", tag \"val/roc_auc\": expected a number"));
  }
}

// Values out of range (issue #17: a negative data epoch was carried on into later checkpoints;
// a step of 1e30 wrapped around to a negative step) are refused, naming the key.
TEST(TrainState, RefusesCountsAndAmountsOutOfRange) {
  Json good = to_json(TrainState{});
  auto error_with = [&](const std::string& pointer, const Json& value) -> std::string {
    Json damaged = good;
    damaged[Json::json_pointer(pointer)] = value;
    try {
      train_state_from_json(damaged, "ckpt/train_state.json");
    } catch (const DataError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_with("/data/epoch", -1),
            "data error in ckpt/train_state.json: train state key \"data.epoch\": expected a "
            "whole number from 0 to 2^53, got -1");
  EXPECT_THAT(error_with("/step", 1e30), HasSubstr("\"step\": expected a whole number"));
  EXPECT_THAT(error_with("/step", 3.5), HasSubstr("got 3.5"));
  EXPECT_THAT(error_with("/samples", "12"), HasSubstr("\"samples\": expected a whole number"));
  EXPECT_THAT(error_with("/stage/start/step", -4), HasSubstr("\"stage.start.step\""));
  EXPECT_THAT(error_with("/epoch", -0.5), HasSubstr("\"epoch\": expected a number from 0"));
  EXPECT_THAT(error_with("/seconds", nullptr), HasSubstr("got null"));
  EXPECT_THAT(error_with("/lr_multiplier", 2), HasSubstr("from 0 to 1, got 2"));
  EXPECT_THAT(error_with("/rewinds", -1), HasSubstr("\"rewinds\""));
  // fp16's loss scaler: null, or its scale and good steps (a number here was an internal error).
  EXPECT_THAT(error_with("/precision", -1),
              HasSubstr("\"precision\": expected null or an object with \"loss_scale\""));
  EXPECT_THAT(error_with("/precision", {{"loss_scale", 0}, {"good_steps", 3}}),
              HasSubstr("\"precision.loss_scale\""));
  EXPECT_THAT(error_with("/precision", {{"loss_scale", 1024}}), HasSubstr("lacks \"good_steps\""));
  EXPECT_EQ(error_with("/precision", {{"loss_scale", 1024}, {"good_steps", 3}}), "no error");
  EXPECT_EQ(error_with("/step", 12), "no error");
}

// A periodic checkpoint on the last step is taken before the final validation (validate_every
// does not fall there): the run saves that step again, with the validation in it.
TEST(TrainerResume, TheFinalCheckpointHoldsTheFinalValidation) {
  torch::manual_seed(5);  // a rig whose val/loss falls from step 4 to 6
  TrainerRig rig;
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  rig.add_callback("{type: checkpoint, every: 1 step, keep_last: 1, keep_best: 1}");
  TrainResult result = rig.fit(train_options("6 steps", "4 steps", "100 steps"));
  ASSERT_EQ(result.checkpoint, rig.checkpoints_dir + "/step-000000006");
  TrainState saved = read_train_state(result.checkpoint);
  EXPECT_TRUE(saved.validated);
  EXPECT_THAT(rig.steps_logged("val/loss"), ElementsAre(4, 6));
  std::vector<double> losses = rig.values_logged("val/loss");
  EXPECT_NEAR(saved.last.at("val/loss"), losses.back(), 1e-6);
  // Retention ranks the step saved again by its new value, not the one it first had (step 4's).
  ASSERT_LT(losses[1], losses[0]);
  EXPECT_THAT(read_text_file(rig.checkpoints_dir + "/best"), HasSubstr("step-000000006"));
}

TEST(TrainState, RestoredRandomGeneratorsRepeatTheirDraws) {
  torch::manual_seed(3);
  Json saved = capture_rng();
  torch::Tensor first = torch::rand({4});
  torch::rand({100});  // moves on
  restore_rng(saved, "t.json");
  EXPECT_TRUE(torch::equal(torch::rand({4}), first));
}

TEST(TrainState, ADamagedStateNamesItsFileAndKey) {
  Json json = to_json(TrainState{});
  json.erase("data");
  try {
    train_state_from_json(json, "ckpt/train_state.json");
    FAIL() << "a state without its data position was accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("ckpt/train_state.json"));
    EXPECT_THAT(e.what(), HasSubstr("\"data\""));
  }
  Json bad_rng = to_json(TrainState{});
  bad_rng["rng"] = {{"cpu", "zz"}};
  EXPECT_THROW(restore_rng(bad_rng["rng"], "t.json"), DataError);
  bad_rng["rng"] = {{"cpu", "00ff"}};
  EXPECT_THROW(restore_rng(bad_rng["rng"], "t.json"), DataError);  // too short for the state
  // Without the CPU generator a resumed run would draw from the seed again, silently.
  EXPECT_THAT([] { restore_rng(Json::object(), "t.json"); },
              ::testing::ThrowsMessage<DataError>(HasSubstr("lacks the CPU generator's state")));
  bad_rng["rng"] = {{"cpu", 7}};
  EXPECT_THAT(
      [&] { parse_train_state(bad_rng.dump(), "t.json"); },
      ::testing::ThrowsMessage<DataError>(HasSubstr("\"rng.cpu\": expected a hex string, got 7")));
  bad_rng["rng"] = Json::array();
  EXPECT_THROW(parse_train_state(bad_rng.dump(), "t.json"), DataError);
}

TEST(TrainState, ATruncatedStateFileNamesItsFileAndOffset) {
  kiln::testing::TempDir dir;
  std::string text = to_json(TrainState{}).dump();
  dir.write("train_state.json", text.substr(0, text.size() / 2));
  try {
    read_train_state(dir.path());
    FAIL() << "half a train state was read";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.path() + "/train_state.json"));
    EXPECT_THAT(e.what(), HasSubstr("byte offset"));
  }
  EXPECT_THROW(read_train_state(dir.path() + "/missing"), Error);
}

// A state edited to another step resumed at a step the run never reached (a campaign's find).
TEST(TrainState, AStepOtherThanItsFoldersIsADataError) {
  kiln::testing::TempDir dir;
  TrainState state;
  state.progress.steps = 250;
  dir.write("step-000000250/train_state.json", to_json(state).dump());
  EXPECT_EQ(read_train_state(dir.file("step-000000250")).progress.steps, 250);
  state.progress.steps = 999999;
  dir.write("step-000000250/train_state.json", to_json(state).dump());
  EXPECT_THAT([&] { read_train_state(dir.file("step-000000250")); },
              ::testing::ThrowsMessage<DataError>(
                  HasSubstr("\"step\" is 999999, but its folder is step 250")));
}

}  // namespace trainer_resume_test
}  // namespace kiln::engine
