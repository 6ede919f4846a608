// Every option of every schedule refuses malformed values with a message that names its config
// path and what would be valid; golden tests (tests/golden) check the shapes themselves.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/scheduler.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace scheduler_options_test {

using ::testing::HasSubstr;

struct BadConfig {
  const char* config;
  const char* expected;  // part of the message
  ScheduleSpan span = {20, 4, 8};
};

std::string error_building(const BadConfig& bad) {
  try {
    scheduler_registry().create(read_spec("scheduler", bad.config), bad.span);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Test names show the config, not the struct's bytes.
void PrintTo(const BadConfig& bad, std::ostream* out) { *out << bad.config; }

class RefusedSchedule : public ::testing::TestWithParam<BadConfig> {};

TEST_P(RefusedSchedule, NamesThePathAndTheFix) {
  EXPECT_THAT(error_building(GetParam()), HasSubstr(GetParam().expected)) << GetParam().config;
}

const ScheduleSpan kTimed = {0, 4, 8};  // train.max in time: total steps unknown

INSTANTIATE_TEST_SUITE_P(
    Options, RefusedSchedule,
    ::testing::Values(
        BadConfig{"cosin", "unknown scheduler \"cosin\"; did you mean \"cosine\"?"},
        BadConfig{"{type: step, step_size: 5 min}",
                  "config error at scheduler.step_size: \"5 min\" is a time"},
        BadConfig{"{type: step, step_size: often}", "config error at scheduler.step_size"},
        BadConfig{"{type: step, gamma: 0}", "config error at scheduler.gamma: expected number > 0"},
        BadConfig{"{type: step, gamma: fast}", "config error at scheduler.gamma"},
        BadConfig{"{type: step, step_size: 2 epochs, warmup: 1 h}",
                  "config error at scheduler.warmup: \"1 h\" is a time"},
        BadConfig{"multistep", "config error at scheduler.milestones"},
        BadConfig{"{type: multistep, milestones: []}",
                  "config error at scheduler.milestones: expected list of period of at least one"},
        BadConfig{"{type: multistep, milestones: [3 steps, 10 min]}",
                  "config error at scheduler.milestones[1]: \"10 min\" is a time"},
        BadConfig{"{type: multistep, milestones: [3 steps, -2 epochs]}",
                  "config error at scheduler.milestones[1]"},
        BadConfig{"{type: multistep, milestones: [3 steps], gamma: -0.1}",
                  "config error at scheduler.gamma: expected number > 0"},
        BadConfig{"{type: exponential, gamma: -1}",
                  "config error at scheduler.gamma: expected number > 0"},
        BadConfig{"{type: exponential, staircase: 3}",
                  "config error at scheduler.staircase: expected boolean"},
        BadConfig{"{type: linear_warmup, floor: 1.5}",
                  "config error at scheduler.floor: expected number in [0, 1]"},
        BadConfig{"{type: linear_warmup, warmup: 5 epochs}",
                  "warm-up (20 steps) must be shorter than training (20 steps)"},
        BadConfig{"{type: linear_warmup, warmup: 2 steps}", "give train.max in steps", kTimed},
        BadConfig{"{type: linear_warmup, warmup_start: -1}",
                  "config error at scheduler.warmup_start: expected number in [0, 1]"},
        BadConfig{"{type: one_cycle, anneal: cosine}",
                  "config error at scheduler.anneal: expected one of \"cos\", \"linear\", got "
                  "\"cosine\""},
        BadConfig{"{type: one_cycle, pct_start: 1.2}",
                  "config error at scheduler.pct_start: expected number in [0, 1]"},
        BadConfig{"{type: one_cycle, pct_start: 0.05}",
                  "config error at scheduler.pct_start: the rise lasts pct_start x 20 steps = 1 "
                  "steps; it must be at least 2 steps"},
        BadConfig{"{type: one_cycle, pct_start: 1}",
                  "config error at scheduler.pct_start: the rise lasts pct_start x 20 steps = 20 "
                  "steps"},
        BadConfig{"{type: one_cycle, div_factor: 0}",
                  "config error at scheduler.div_factor: expected number > 0"},
        BadConfig{"{type: one_cycle, final_div_factor: -5}",
                  "config error at scheduler.final_div_factor: expected number > 0"},
        BadConfig{"one_cycle", "give train.max in steps", kTimed},
        BadConfig{"{type: one_cycle, warmup: 2 steps}",
                  "config error at scheduler.warmup: unknown key"},
        BadConfig{"{type: polynomial, power: 0}",
                  "config error at scheduler.power: expected number > 0"},
        BadConfig{"{type: polynomial, floor: -0.1}",
                  "config error at scheduler.floor: expected number in [0, 1]"},
        BadConfig{"polynomial", "give train.max in steps", kTimed},
        BadConfig{"{type: reduce_on_plateau, factor: 1}",
                  "config error at scheduler.factor: expected number in (0, 1), got 1"},
        BadConfig{"{type: reduce_on_plateau, factor: 0}", "config error at scheduler.factor"},
        BadConfig{"{type: reduce_on_plateau, factor: half}", "config error at scheduler.factor"},
        BadConfig{"{type: reduce_on_plateau, patience: -1}",
                  "config error at scheduler.patience: expected integer >= 0"},
        BadConfig{"{type: reduce_on_plateau, patience: 2.5}", "config error at scheduler.patience"},
        BadConfig{"{type: reduce_on_plateau, threshold: -0.1}",
                  "config error at scheduler.threshold: expected number >= 0"},
        BadConfig{"{type: reduce_on_plateau, threshold_mode: relative}",
                  "config error at scheduler.threshold_mode: expected one of \"rel\", \"abs\""},
        BadConfig{"{type: reduce_on_plateau, cooldown: -2}",
                  "config error at scheduler.cooldown: expected integer >= 0"},
        BadConfig{"{type: reduce_on_plateau, floor: 1.5}",
                  "config error at scheduler.floor: expected number in [0, 1]"},
        BadConfig{"{type: reduce_on_plateau, mode: lower}",
                  "config error at scheduler.mode: expected one of \"auto\", \"min\", \"max\""},
        BadConfig{"{type: reduce_on_plateau, monitor: [val/loss]}",
                  "config error at scheduler.monitor"},
        BadConfig{"{type: reduce_on_plateau, warmup: 2 steps}",
                  "config error at scheduler.warmup: unknown key"}));

TEST(Schedules, OfAbsolutePositionsNeedNoLengthOfTraining) {
  // step, multistep and exponential count from the start, so a run of unknown length may use them.
  for (const char* config : {"step", "{type: multistep, milestones: [2 epochs]}", "exponential"})
    EXPECT_EQ(error_building({config, "", kTimed}), "no error") << config;
}

TEST(Schedules, BeyondTheEndOfTrainingKeepTheirLastRate) {
  // The trainer may run a step past the plan (train.max in samples rounds up).
  ScheduleSpan span{10, 5, 8};
  for (const char* config : {"{type: linear_warmup, floor: 0.1}", "{type: polynomial, floor: 0.1}",
                             "{type: one_cycle, div_factor: 10, final_div_factor: 1}"}) {
    auto schedule = scheduler_registry().create(read_spec("scheduler", config), span);
    EXPECT_NEAR(schedule->factor(10), 0.1, 1e-12) << config;
    EXPECT_DOUBLE_EQ(schedule->factor(12), schedule->factor(10)) << config;
  }
}

}  // namespace scheduler_options_test
}  // namespace kiln::optim
