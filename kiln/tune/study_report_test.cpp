// What `kiln tune show` tells: the trials table with each parameter's value, a failure's error
// and a pruned trial's reason; the best complete trial; importances that credit the parameter
// the values follow; the best trial's config without the tune section. And the test functions
// at their known minima.

#include "kiln/tune/study_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/tune/test_functions.h"

namespace kiln::tune {
namespace study_report_test {

using ::testing::HasSubstr;

StudyInfo info() {
  Json config = parse_config_text(
      "optimizer: {type: sgd, lr: 0.1}\n"
      "tune:\n  space:\n    optimizer.lr: {type: loguniform, low: 1.0e-4, high: 1}\n"
      "    noise: {type: choice, values: [a, b]}\n",
      "t.yaml", false);
  return {"s", "val/accuracy", true, config, "now"};
}

TrialRecord trial(int64_t number, TrialState state, double lr, std::string noise,
                  std::optional<double> value, std::string error = "") {
  TrialRecord t;
  t.number = number;
  t.state = state;
  t.values = {{"optimizer.lr", lr}, {"noise", noise}};
  t.assignment = *study_space(info()).assignment_of(t.values);
  t.value = value;
  t.error = std::move(error);
  return t;
}

// The value follows lr alone; `noise` alternates regardless.
std::vector<TrialRecord> trials() {
  std::vector<TrialRecord> out;
  double lrs[] = {1e-4, 1e-3, 1e-2, 1e-1, 0.3, 0.5, 0.7, 0.9};
  for (int i = 0; i < 8; ++i)
    out.push_back(trial(i, TrialState::kComplete, lrs[i], i % 2 ? "a" : "b", 0.5 + 0.05 * i));
  out.push_back(trial(8, TrialState::kFailed, 0.2, "a", std::nullopt, "exited with status 1: x"));
  out.push_back(trial(9, TrialState::kPruned, 0.002, "b", 0.1, "asha: behind"));
  return out;
}

TEST(StudyReport, TabulatesTrialsAndFindsTheBest) {
  std::string text = trials_table(info(), study_space(info()), trials());
  EXPECT_THAT(text, HasSubstr("trial  state     val/accuracy  optimizer.lr  noise  note"));
  EXPECT_THAT(text, HasSubstr("8      failed    -             0.2           a      exited with"));
  EXPECT_THAT(text, HasSubstr("9      pruned    0.1           0.002         b      asha: behind"));
  std::optional<TrialRecord> best = best_trial(trials(), true);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->number, 7);
  EXPECT_EQ(best_trial(trials(), false)->number, 0);
  EXPECT_FALSE(best_trial({trials()[8]}, true));
}

TEST(StudyReport, ImportanceCreditsTheParameterTheValuesFollow) {
  auto shares = importance(study_space(info()), trials());
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].first, "optimizer.lr");
  EXPECT_GT(shares[0].second, 0.9);
  EXPECT_NEAR(shares[0].second + shares[1].second, 1, 1e-12);
  EXPECT_TRUE(importance(study_space(info()), {trials()[0], trials()[1]}).empty());
}

TEST(StudyReport, TheBestConfigIsTheStudysWithTheTrialsValues) {
  Json config = trial_config_tree(info(), study_space(info()), trials()[5]);
  EXPECT_FALSE(config.contains("tune"));
  EXPECT_EQ(config["optimizer"]["lr"], 0.5);
  EXPECT_EQ(config["noise"], "a");
}

TEST(TestFunctions, ReachTheirKnownMinima) {
  EXPECT_NEAR(test_function("branin").evaluate({{"x1", M_PI}, {"x2", 2.275}}), 0.397887, 1e-5);
  Json optimum = {{"x1", 0.20169},  {"x2", 0.150011}, {"x3", 0.476874},
                  {"x4", 0.275332}, {"x5", 0.311652}, {"x6", 0.6573}};
  EXPECT_NEAR(test_function("hartmann6").evaluate(optimum), -3.32237, 1e-4);
  EXPECT_EQ(test_function("conditional").evaluate({{"kind", "bowl"}, {"x", 1.0}}), 0);
  EXPECT_NEAR(
      test_function("conditional").evaluate({{"kind", "valley"}, {"lr", 0.01}, {"width", 16}}),
      0.25, 1e-12);
  EXPECT_NEAR(test_function("classifier").evaluate({{"kind", "svc"}, {"svc_c", 100.0}}), 0.05,
              1e-12);
  EXPECT_NEAR(test_function("classifier").evaluate({{"kind", "forest"}, {"rf_max_depth", 8}}), 0.08,
              1e-12);
  Json ones = Json::object();
  for (int i = 1; i <= 10; ++i) ones["x" + std::to_string(i)] = 1.0;
  EXPECT_EQ(test_function("rosenbrock10").evaluate(ones), 0);
  ones["x10"] = 0.0;
  EXPECT_EQ(test_function("rosenbrock10").evaluate(ones), 100);  // 100 (0 - 1)^2
  EXPECT_THROW(test_function("rosenbrock"), UsageError);
}

}  // namespace study_report_test
}  // namespace kiln::tune
