// Every scheduler against torch.optim.lr_scheduler: the learning-rate factor of every step of a
// run (schedulers.json, written by make_golden.py); reduce_on_plateau against ReduceLROnPlateau
// fed the same validation value after every step.

#include <gtest/gtest.h>

#include "kiln/optim/scheduler.h"
#include "tests/golden/golden.h"

namespace kiln::golden {
namespace schedulers_golden_test {

const std::vector<std::string>& case_names() {
  static const std::vector<std::string> names = {
      "constant_plain",
      "constant_warmup",
      "cosine_plain",
      "cosine_warmup_floor",
      "cosine_warmup_in_epochs",
      "cosine_warmup_in_samples",
      "step_in_epochs",
      "step_in_steps_warmup",
      "multistep_mixed_units",
      "multistep_warmup",
      "exponential_per_step",
      "exponential_staircase_warmup",
      "linear_warmup_like_hugging_face",
      "linear_warmup_floor_in_epochs",
      "one_cycle_defaults",
      "one_cycle_linear",
      "polynomial_power",
      "polynomial_warmup_floor",
      "reduce_on_plateau_defaults",
      "reduce_on_plateau_threshold_cooldown_floor",
      "reduce_on_plateau_max_abs",
  };
  return names;
}

const Json& golden_cases() {
  static const Json json = load_golden("schedulers.json");
  return json.at("cases");
}

class SchedulerVsTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerVsTorch, FactorOfEveryStep) {
  const Json& golden_case = find_case(golden_cases(), GetParam());
  SCOPED_TRACE(golden_case.at("config").get<std::string>());
  optim::ScheduleSpan span{golden_case.at("total_steps").get<int64_t>(),
                           golden_case.at("steps_per_epoch").get<int64_t>(),
                           golden_case.at("batch_size").get<int64_t>()};
  auto scheduler = optim::scheduler_registry().create(
      read_spec("scheduler", golden_case.at("config").get<std::string>()), span);
  const auto expected = golden_case.at("factors").get<std::vector<double>>();
  ASSERT_EQ(int64_t(expected.size()), span.total_steps);
  // Cases of a schedule that reacts to validation give the value seen after each step.
  std::vector<double> values;
  if (golden_case.contains("values")) values = golden_case.at("values").get<std::vector<double>>();
  for (int64_t step = 0; step < span.total_steps; ++step) {
    EXPECT_NEAR(scheduler->factor(step), expected[step], 1e-6) << "step " << step;
    if (!values.empty())
      scheduler->observe({{golden_case.at("monitor").get<std::string>(), values[step]}});
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, SchedulerVsTorch, ::testing::ValuesIn(case_names()),
                         [](const auto& info) { return info.param; });

TEST(GoldenSchedulerCases, EveryGeneratedCaseIsTested) {
  EXPECT_EQ(case_names_in(golden_cases()), case_names());
}

TEST(GoldenSchedulerCases, EveryRegisteredSchedulerHasACase) {
  for (const std::string& name : optim::scheduler_registry().names()) {
    bool found = false;
    for (const std::string& c : case_names()) found = found || c.rfind(name + "_", 0) == 0;
    EXPECT_TRUE(found) << name << " has no golden case in make_golden.py";
  }
}

}  // namespace schedulers_golden_test
}  // namespace kiln::golden
