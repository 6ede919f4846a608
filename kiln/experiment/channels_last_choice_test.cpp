// runtime.channels_last: auto: which choices need no timing, the margin a timing must show, a
// recorded choice kept (a damaged one measured again), and timing that leaves the model as it
// found it.

#include "kiln/experiment/channels_last_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/engine/trainer_test_rig.h"

namespace kiln::experiment {
namespace channels_last_choice_test {

using engine::AutoSwitch;
using ::testing::HasSubstr;

TEST(ChannelsLastChoice, WhatIsAskedOrPlainNeedsNoTiming) {
  auto on = channels_last_unmeasured(AutoSwitch::kOn, false, true);
  ASSERT_TRUE(on);
  EXPECT_TRUE(on->used);
  EXPECT_EQ(on->why, "asked by runtime.channels_last");
  auto off = channels_last_unmeasured(AutoSwitch::kOff, true, false);
  ASSERT_TRUE(off);
  EXPECT_FALSE(off->used);

  auto dense = channels_last_unmeasured(AutoSwitch::kAuto, false, false);
  ASSERT_TRUE(dense);
  EXPECT_FALSE(dense->used);
  EXPECT_THAT(dense->why, HasSubstr("no 4-D kernels"));
  auto deterministic = channels_last_unmeasured(AutoSwitch::kAuto, true, true);
  ASSERT_TRUE(deterministic);
  EXPECT_FALSE(deterministic->used);
  EXPECT_THAT(deterministic->why, HasSubstr("train.deterministic"));
  EXPECT_FALSE(channels_last_unmeasured(AutoSwitch::kAuto, true, false)) << "auto must measure";
}

TEST(ChannelsLastChoice, ChannelsLastMustBeAtLeastFivePercentFaster) {
  ChannelsLastChoice faster = channels_last_from_times({40.0, 30.0});
  EXPECT_TRUE(faster.used);
  EXPECT_EQ(faster.why, "auto: a training step took 30.0 ms channels-last, 40.0 ms contiguous");
  ChannelsLastChoice close = channels_last_from_times({40.0, 38.5});
  EXPECT_FALSE(close.used) << "3.75% is within the noise";
  EXPECT_THAT(close.why, HasSubstr("at least 5% faster"));
  EXPECT_FALSE(channels_last_from_times({30.0, 40.0}).used);
  EXPECT_TRUE(channels_last_from_times({40.0, 38.0}).used) << "exactly 95%";

  Json record = faster.record();
  EXPECT_EQ(record["asked"], "auto");
  EXPECT_EQ(record["used"], true);
  EXPECT_EQ(record["step_ms"]["contiguous"], 40.0);
  EXPECT_EQ(record["step_ms"]["channels_last"], 30.0);
}

TEST(ChannelsLastChoice, ARecordedChoiceIsKeptAndADamagedOneIsMeasuredAgain) {
  Json run = {{"status", "running"},
              {"channels_last", channels_last_from_times({40, 30}).record()}};
  auto kept = channels_last_recorded(run);
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->used);
  EXPECT_THAT(kept->why, HasSubstr("kept from the run's start"));
  ASSERT_TRUE(kept->times);
  EXPECT_EQ(kept->times->channels_last_ms, 30.0);

  EXPECT_FALSE(channels_last_recorded(Json{{"status", "running"}})) << "a run from before auto";
  EXPECT_FALSE(channels_last_recorded(Json()));
  for (const char* damaged : {R"("yes")", R"({"used": "yes"})", R"({"asked": "auto"})", "[]"})
    EXPECT_FALSE(channels_last_recorded(Json{{"channels_last", Json::parse(damaged)}})) << damaged;
  auto no_times = channels_last_recorded(Json::parse(R"({"channels_last":
      {"used": false, "step_ms": {"contiguous": "fast"}}})"));
  ASSERT_TRUE(no_times);
  EXPECT_FALSE(no_times->times) << "step times that are no numbers are not kept";
}

// Timing changes neither weights nor batch norm statistics, leaves no gradient and no draw of
// the random generators behind, and hands the model back contiguous.
TEST(ChannelsLastChoice, TimingLeavesTheModelAsItFoundIt) {
  torch::manual_seed(5);
  auto model = models::build_model(
      read_spec("model",
                "{type: sequential, layers: [{type: conv2d, out: 4, kernel: 3, padding: same}, "
                "batchnorm, relu, {type: dropout, p: 0.5}, flatten, {type: linear, out: 3}]}"),
      {2, 6, 6});
  model->eval();
  engine::Objective objective(engine::test_rig::single_head(
      losses::loss_registry().create(read_spec("loss", "cross_entropy")), {}));
  data::Batch batch;
  batch.input = torch::randn({8, 2, 6, 6});
  batch.target = torch::randint(0, 3, {8}, torch::kLong);
  std::vector<torch::Tensor> before;
  for (const auto& tensor : model->parameters()) before.push_back(tensor.clone());
  for (const auto& tensor : model->buffers()) before.push_back(tensor.clone());
  torch::manual_seed(7);
  torch::Tensor next_draw = torch::rand({4});  // what the generator gives next, untouched
  torch::manual_seed(7);

  LayoutTimes times =
      time_layouts(*model, objective, batch, torch::kCPU, engine::PrecisionMode::kFp32);
  EXPECT_GT(times.contiguous_ms, 0);
  EXPECT_GT(times.channels_last_ms, 0);

  EXPECT_TRUE(torch::equal(torch::rand({4}), next_draw)) << "the generators are put back";
  EXPECT_FALSE(model->is_training());
  size_t i = 0;
  for (const auto& tensor : model->parameters()) {
    EXPECT_TRUE(torch::equal(tensor, before[i++]));
    EXPECT_FALSE(tensor.grad().defined());
    EXPECT_TRUE(tensor.is_contiguous());
  }
  for (const auto& tensor : model->buffers()) EXPECT_TRUE(torch::equal(tensor, before[i++]));
}

}  // namespace channels_last_choice_test
}  // namespace kiln::experiment
