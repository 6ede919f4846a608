// What the golden values cannot show: the schedules' config errors name the key and the fix.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/scheduler.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace scheduler_test {

using ::testing::HasSubstr;

std::string error_building(const std::string& config, const ScheduleSpan& span) {
  try {
    scheduler_registry().create(read_spec("scheduler", config), span);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Scheduler, CosineNeedsTheLengthOfTraining) {
  std::string error = error_building("cosine", ScheduleSpan{0, 10, 8});
  EXPECT_THAT(error, HasSubstr("config error at scheduler"));
  EXPECT_THAT(error, HasSubstr("give train.max in steps, epochs or samples"));
  // constant has no shape to fit, so a run of unknown length may use it
  EXPECT_EQ(error_building("constant", ScheduleSpan{0, 10, 8}), "no error");
}

TEST(Scheduler, WarmupMustBeShorterThanTrainingAndNotATime) {
  EXPECT_THAT(error_building("{type: cosine, warmup: 2 epochs}", ScheduleSpan{20, 10, 8}),
              HasSubstr("warm-up (20 steps) must be shorter than training (20 steps)"));
  EXPECT_THAT(error_building("{type: constant, warmup: 5 min}", ScheduleSpan{20, 10, 8}),
              HasSubstr("config error at scheduler.warmup: \"5 min\" is a time"));
  EXPECT_THAT(error_building("{type: cosine, floor: 2}", ScheduleSpan{20, 10, 8}),
              HasSubstr("scheduler.floor"));
}

TEST(ScheduledLearningRates, ScalesEveryGroupFromItsOwnBaseRate) {
  torch::Tensor a = torch::zeros({1}, torch::requires_grad());
  torch::Tensor b = torch::zeros({1}, torch::requires_grad());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{a},
                      std::make_unique<torch::optim::SGDOptions>(0.1));
  groups.emplace_back(std::vector<torch::Tensor>{b},
                      std::make_unique<torch::optim::SGDOptions>(0.01));
  torch::optim::SGD sgd(groups, torch::optim::SGDOptions(0.1));
  auto cosine = scheduler_registry().create(read_spec("scheduler", "cosine"), {4, 4, 1});
  ScheduledLearningRates rates(sgd, *cosine);
  rates.apply(2);  // half-way: factor 0.5
  EXPECT_DOUBLE_EQ(sgd.param_groups()[0].options().get_lr(), 0.05);
  EXPECT_DOUBLE_EQ(sgd.param_groups()[1].options().get_lr(), 0.005);
  rates.apply(0);  // from the base rates again, not from the last ones set
  EXPECT_DOUBLE_EQ(sgd.param_groups()[1].options().get_lr(), 0.01);
}

}  // namespace scheduler_test
}  // namespace kiln::optim
