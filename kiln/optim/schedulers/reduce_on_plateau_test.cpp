// What the golden values (tests/golden) cannot show of reduce_on_plateau: its default monitor
// comes from the run, a reduction is reported, values of other tags are ignored, and its state
// survives JSON so that a resumed run reduces exactly as an uninterrupted one.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/optim/scheduler.h"
#include "tests/support/components.h"

namespace kiln::optim {
namespace reduce_on_plateau_test {

using ::testing::HasSubstr;

std::unique_ptr<Scheduler> plateau(const std::string& config, ScheduleSpan span = {}) {
  return scheduler_registry().create(read_spec("scheduler", config), span);
}

TEST(ReduceOnPlateau, WatchesTheRunsMonitorUnlessItNamesItsOwn) {
  ScheduleSpan span;
  span.monitor = "val/accuracy";
  span.mode = Mode::kMax;
  auto schedule = plateau("{type: reduce_on_plateau, patience: 0}", span);
  EXPECT_EQ(schedule->monitor(), "val/accuracy");
  schedule->observe({{"val/accuracy", 0.5}});
  schedule->observe({{"val/accuracy", 0.6}});  // higher is better: no reduction
  EXPECT_EQ(schedule->factor(0), 1.0);
  EXPECT_EQ(plateau("{type: reduce_on_plateau, monitor: train/loss}", span)->monitor(),
            "train/loss");
}

TEST(ReduceOnPlateau, ReportsEachReductionAndIgnoresOtherTags) {
  auto schedule = plateau("{type: reduce_on_plateau, patience: 1, factor: 0.5}");
  EXPECT_EQ(schedule->observe({{"val/loss", 1.0}}), "");
  EXPECT_EQ(schedule->observe({{"val/loss", 1.0}}), "");      // one bad validation: tolerated
  EXPECT_EQ(schedule->observe({{"val/accuracy", 3.0}}), "");  // not watched: not counted
  std::string line = schedule->observe({{"val/loss", 1.2}, {"val/accuracy", 0.1}});
  EXPECT_THAT(line, HasSubstr("val/loss has not improved on 1 for 2 validations"));
  EXPECT_THAT(line, HasSubstr("factor now 0.5"));
  EXPECT_EQ(schedule->factor(123), 0.5);  // the same at any step
}

TEST(ReduceOnPlateau, StopsReportingAtTheFloor) {
  auto schedule = plateau("{type: reduce_on_plateau, patience: 0, factor: 0.5, floor: 0.5}");
  schedule->observe({{"val/loss", 1.0}});
  EXPECT_THAT(schedule->observe({{"val/loss", 1.0}}), HasSubstr("factor now 0.5"));
  EXPECT_EQ(schedule->observe({{"val/loss", 1.0}}), "");
  EXPECT_EQ(schedule->factor(0), 0.5);
}

TEST(ReduceOnPlateau, StateSurvivesJsonAndContinuesTheSame) {
  const std::string config = "{type: reduce_on_plateau, patience: 1, cooldown: 1}";
  auto straight = plateau(config), first = plateau(config);
  std::vector<double> values = {3, 2, 2, 2, 2, 2, 1.5, 2, 2, 2, 2, 2};
  for (size_t i = 0; i < 5; ++i) {
    straight->observe({{"val/loss", values[i]}});
    first->observe({{"val/loss", values[i]}});
  }
  auto resumed = plateau(config);
  resumed->load_state(Json::parse(first->state().dump()));
  for (size_t i = 5; i < values.size(); ++i) {
    straight->observe({{"val/loss", values[i]}});
    resumed->observe({{"val/loss", values[i]}});
    EXPECT_EQ(resumed->factor(0), straight->factor(0)) << "validation " << i;
  }
  EXPECT_EQ(straight->state(), resumed->state());
  EXPECT_LT(straight->factor(0), 0.01);  // it did reduce, more than once
}

TEST(ReduceOnPlateau, BeforeAnyValidationItsBestIsWrittenAsNull) {
  auto schedule = plateau("reduce_on_plateau");
  Json state = schedule->state();
  EXPECT_TRUE(state.at("best").is_null());
  auto back = plateau("reduce_on_plateau");
  back->load_state(Json::parse(state.dump()));
  EXPECT_EQ(back->observe({{"val/loss", 1e300}}), "");  // anything beats no value at all
  EXPECT_EQ(back->state().at("best"), 1e300);
}

TEST(ReduceOnPlateau, RefusesAStateThatDoesNotFit) {
  auto schedule = plateau("reduce_on_plateau");
  EXPECT_ANY_THROW(schedule->load_state(Json{{"factor", 0.5}}));
  EXPECT_ANY_THROW(schedule->load_state(
      Json{{"factor", "half"}, {"best", 1.0}, {"waited", 0}, {"cooldown_left", 0}}));
}

TEST(Schedules, OfTheStepHaveNoMonitorAndNoState) {
  auto cosine = scheduler_registry().create(read_spec("scheduler", "cosine"), {10, 2, 8});
  EXPECT_EQ(cosine->monitor(), "");
  EXPECT_EQ(cosine->state(), Json::object());
  EXPECT_EQ(cosine->observe({{"val/loss", 1.0}}), "");
}

}  // namespace reduce_on_plateau_test
}  // namespace kiln::optim
