// The pruners: asha judges a trial once per rung against the values reported there before it
// (the best 1/reduction go on; too few to judge, all go on); median stops a trial worse than the
// completed trials' median at the same step, after its warm-up.

#include "kiln/tune/pruner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::tune {
namespace pruner_test {

using ::testing::HasSubstr;

std::unique_ptr<Pruner> pruner(const std::string& yaml) {
  ComponentSpec spec("pruner");
  OptionTraits<ComponentSpec>::read(parse_config_text(yaml, "tune.yaml", false), spec,
                                    {"tune.pruner", nullptr});
  return pruner_registry().create(spec);
}

// A trial that reported `values` at epochs 1, 2, ... (100 steps an epoch).
TrialRecord trial(int64_t number, std::vector<double> values,
                  TrialState state = TrialState::kRunning) {
  TrialRecord t;
  t.number = number;
  t.state = state;
  for (size_t i = 0; i < values.size(); ++i)
    t.reported.push_back({int64_t(i + 1) * 100, double(i + 1), values[i]});
  return t;
}

TEST(AshaPruner, KeepsTheBestThirdAtEachRungOnlyWhenItFirstGetsThere) {
  auto asha = pruner("{type: asha, min_resource: 1, reduction: 3}");
  // Rung 1 epoch: 0.5, 0.6 reported before; a third trial with 0.4 (accuracy, max).
  std::vector<TrialRecord> trials = {trial(0, {0.5}), trial(1, {0.6}), trial(2, {0.4})};
  std::optional<std::string> reason = asha->prune(2, trials, true);
  ASSERT_TRUE(reason);
  EXPECT_THAT(*reason, HasSubstr("2 of the 3 trials that reached 1 epoch did better than 0.4"));
  EXPECT_FALSE(asha->prune(1, trials, true)) << "the best of three goes on";
  EXPECT_TRUE(asha->prune(0, trials, true));
  // Minimising, the 0.4 is the best.
  EXPECT_FALSE(asha->prune(2, trials, false));
  // Two at the rung: too few to judge.
  std::vector<TrialRecord> two = {trial(0, {0.9}), trial(1, {0.1})};
  EXPECT_FALSE(asha->prune(1, two, true));
  // Epoch 2 is no rung (1, 3, 9, ...): a trial past rung 1 is not judged again until epoch 3.
  trials[1] = trial(1, {0.6, 0.1});
  EXPECT_FALSE(asha->prune(1, trials, true));
  trials[1] = trial(1, {0.6, 0.1, 0.1});
  trials.push_back(trial(3, {0.7, 0.8, 0.9}, TrialState::kComplete));
  trials.push_back(trial(4, {0.7, 0.8, 0.95}, TrialState::kComplete));
  EXPECT_TRUE(asha->prune(1, trials, true)) << "at rung 3 two of three did better";
}

TEST(AshaPruner, CountsStepsWhenAskedAndWaitsForTheFirstRung) {
  auto asha = pruner("{type: asha, resource: steps, min_resource: 200, reduction: 2}");
  std::vector<TrialRecord> trials = {trial(0, {0.9, 0.9}), trial(1, {0.1})};
  EXPECT_FALSE(asha->prune(1, trials, true)) << "step 100 is before the first rung";
  trials[1] = trial(1, {0.1, 0.2});
  std::optional<std::string> reason = asha->prune(1, trials, true);
  ASSERT_TRUE(reason);
  EXPECT_THAT(*reason, HasSubstr("reached 200 steps"));
}

TEST(MedianPruner, StopsATrialWorseThanTheCompletedMedianAfterItsWarmup) {
  auto median = pruner("{type: median, startup: 2, warmup: 2}");
  std::vector<TrialRecord> trials = {trial(0, {0.5, 0.6, 0.7}, TrialState::kComplete),
                                     trial(1, {0.5, 0.7, 0.8}, TrialState::kComplete),
                                     trial(2, {0.1})};
  EXPECT_FALSE(median->prune(2, trials, true)) << "in its warm-up";
  trials[2] = trial(2, {0.1, 0.2});
  std::optional<std::string> reason = median->prune(2, trials, true);
  ASSERT_TRUE(reason);
  EXPECT_THAT(*reason, HasSubstr("worse than the median 0.65 of 2 other trials at step 200"));
  trials[2] = trial(2, {0.1, 0.66});
  EXPECT_FALSE(median->prune(2, trials, true));
  // A running trial is not among those compared; before `startup` completed trials, none is cut.
  trials[1].state = TrialState::kRunning;
  EXPECT_FALSE(median->prune(2, trials, true));
}

TEST(NoPruner, NeverStopsATrial) {
  auto none = pruner("none");
  EXPECT_FALSE(none->prune(1, {trial(0, {0.9}), trial(1, {0.0})}, true));
}

}  // namespace pruner_test
}  // namespace kiln::tune
