// Schedules in the trainer's loop: reduce_on_plateau sees every validation, says when it reduces,
// keeps its state in checkpoints (a resumed run reduces as an uninterrupted one) and must watch
// a measured tag; hyper-parameter schedules change their value exactly at epoch boundaries, are
// logged as train/NAME and resume from their configured base values.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/text_file.h"
#include "kiln/engine/trainer_test_rig.h"

namespace kiln::engine {
namespace trainer_schedules_test {

using test_rig::train_options;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The rig's val/count is 6 at every validation, so after the first one this schedule reduces at
// each validation (patience 0): at steps 8 and 12 of 3 epochs of 4 steps.
constexpr const char* kPlateau = "{type: reduce_on_plateau, monitor: val/count, patience: 0}";

std::unique_ptr<optim::Scheduler> schedule(const std::string& yaml, const std::string& path) {
  return optim::scheduler_registry().create(read_spec("scheduler", yaml, path), {12, 4, 2});
}

TEST(TrainerSchedules, PlateauReducesAfterAValidationAndSaysSo) {
  TrainerRig rig;
  rig.scheduler = schedule(kPlateau, "scheduler");
  rig.checkpoints_dir = rig.dir.file("checkpoints");
  TrainResult result = rig.fit(train_options("3 epochs", "1 epoch", "1 step"));
  std::vector<double> rates = rig.values_logged("train/lr");
  ASSERT_EQ(rates.size(), 12u);
  for (size_t i = 0; i < 12; ++i) EXPECT_DOUBLE_EQ(rates[i], i < 8 ? 0.1 : 0.01) << i;
  std::string console = read_text_file(rig.dir.file("console.txt"));
  EXPECT_THAT(console, HasSubstr("step 8: reduce_on_plateau: val/count has not improved on 6 for "
                                 "1 validations; learning rate factor now 0.1"));
  EXPECT_THAT(console, HasSubstr("step 12: reduce_on_plateau"));
  Json state = Json::parse(read_text_file(result.checkpoint + "/train_state.json"));
  EXPECT_DOUBLE_EQ(state.at("scheduler").at("factor").get<double>(), 0.01);
}

TEST(TrainerSchedules, PlateauMustWatchAMeasuredTag) {
  TrainerRig rig;
  rig.scheduler = schedule("{type: reduce_on_plateau, monitor: val/acc}", "scheduler");
  try {
    rig.fit(train_options("1 epoch", "1 epoch", "1 step"));
    FAIL() << "an unmeasured monitor was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "scheduler.monitor");
    EXPECT_THAT(e.what(), HasSubstr("\"val/acc\" is never measured"));
    EXPECT_THAT(e.what(), HasSubstr("val/count"));
    EXPECT_THAT(e.what(), HasSubstr("val/loss"));
  }
}

TEST(TrainerSchedules, WeightDecayChangesExactlyAtEpochBoundaries) {
  TrainerRig rig(8, 6, "{type: sgd, lr: 0.1, weight_decay: 0.01}");
  auto halving = schedule("{type: step, step_size: 1 epoch, gamma: 0.5}", "schedules.weight_decay");
  rig.schedules["weight_decay"] = halving.get();
  rig.fit(train_options("3 epochs", "1 epoch", "1 step"));
  // Logged after steps 1..12: the steps of epoch 0 used 0.01, of epoch 1 0.005, of epoch 2 0.0025.
  EXPECT_THAT(rig.values_logged("train/weight_decay"),
              ElementsAre(0.01, 0.01, 0.01, 0.01, 0.005, 0.005, 0.005, 0.005, 0.0025, 0.0025,
                          0.0025, 0.0025));
  auto& options =
      static_cast<torch::optim::SGDOptions&>(rig.optimizer->param_groups()[0].options());
  EXPECT_EQ(options.weight_decay(), 0.0025);
  EXPECT_EQ(options.lr(), 0.1);  // the learning rate is not this schedule's
}

TEST(TrainerSchedules, AHyperParameterTheOptimizerLacksIsAConfigError) {
  TrainerRig rig;  // sgd
  auto cosine = schedule("cosine", "schedules.beta1");
  rig.schedules["beta1"] = cosine.get();
  try {
    rig.fit(train_options("1 epoch", "1 epoch", "1 step"));
    FAIL() << "sgd accepted a beta1 schedule";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "schedules.beta1");
    EXPECT_THAT(e.what(), HasSubstr("it has: dampening, momentum, weight_decay"));
  }
}

// A rig with momentum (so the optimizer state matters), a plateau learning rate and a halving
// weight decay, from the same initial weights every time.
std::unique_ptr<TrainerRig> scheduled_rig(std::vector<std::unique_ptr<optim::Scheduler>>& keep) {
  torch::manual_seed(7);
  auto rig = std::make_unique<TrainerRig>(8, 6,
                                          "{type: sgd, lr: 0.1, momentum: 0.9, "
                                          "weight_decay: 0.01}");
  rig->scheduler = schedule(kPlateau, "scheduler");
  keep.push_back(schedule("{type: step, step_size: 1 epoch, gamma: 0.5}", "schedules"));
  rig->schedules["weight_decay"] = keep.back().get();
  return rig;
}

TEST(TrainerSchedules, HalfThenResumeKeepsThePlateauStateAndTheBaseValues) {
  std::vector<std::unique_ptr<optim::Scheduler>> keep;
  auto straight = scheduled_rig(keep);
  straight->fit(train_options("3 epochs", "1 epoch", "1 step"));

  auto first_half = scheduled_rig(keep);
  first_half->checkpoints_dir = first_half->dir.file("checkpoints");
  // 8 steps: just after the reduction at step 8's validation, with a halved weight decay in the
  // optimizer. (A cut between validations would validate once more at its end, and that
  // validation would count, as any validation does.)
  TrainResult half = first_half->fit(train_options("8 steps", "1 epoch", "1 step"));

  auto second_half = scheduled_rig(keep);
  second_half->resume_from = half.checkpoint;
  second_half->fit(train_options("3 epochs", "1 epoch", "1 step"));

  // Had the factor not been restored, steps 9-12 would use lr 0.1; had the base weight decay been
  // read from the checkpoint's optimizer (0.005 there), they would use 0.00125.
  std::vector<double> rates = straight->values_logged("train/lr");
  EXPECT_EQ(second_half->values_logged("train/lr"),
            std::vector<double>(rates.begin() + 8, rates.end()));
  EXPECT_DOUBLE_EQ(rates.back(), 0.01);
  EXPECT_THAT(second_half->values_logged("train/weight_decay"),
              ElementsAre(0.0025, 0.0025, 0.0025, 0.0025));
  for (const auto& [name, tensor] : named_state(*straight->model))
    EXPECT_TRUE(torch::equal(tensor, named_state(*second_half->model).at(name))) << name;
}

}  // namespace trainer_schedules_test
}  // namespace kiln::engine
