// `schedules:` in the experiment config: each entry a scheduler resolved with its defaults, by a
// hyper-parameter name; malformed entries are config errors at schedules.NAME. Schedules change
// how the steps so far were computed, so a resumed run may not change them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/experiment/experiment_config.h"
#include "kiln/experiment/resume.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {
namespace experiment_config_schedules_test {

using ::testing::HasSubstr;

ExperimentConfig parse(const std::string& schedules_yaml) {
  RawConfig raw;
  raw.tree = parse_config_text(
      "data: {train: {type: fashion_mnist, split: train}}\n"
      "model: {type: sequential, layers: [flatten, {type: linear, out: 10}]}\n"
      "schedules: " +
          schedules_yaml + "\n",
      "exp.yaml", false);
  return parse_experiment(raw);
}

std::string error_parsing(const std::string& schedules_yaml) {
  try {
    parse(schedules_yaml);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ScheduleConfig, EntriesAreSchedulersWithTheirDefaults) {
  ExperimentConfig config =
      parse("{weight_decay: cosine, momentum: {type: step, step_size: 5 epochs, gamma: 0.5}}");
  ASSERT_EQ(config.schedules.items.size(), 2u);
  const ComponentSpec& decay = config.schedules.items.at("weight_decay");
  EXPECT_EQ(decay.type(), "cosine");
  EXPECT_EQ(decay.path, "schedules.weight_decay");
  EXPECT_EQ(decay.spec.at("floor"), 0.0);  // resolved: defaults filled in
  EXPECT_EQ(config.schedules.items.at("momentum").spec.at("gamma"), 0.5);
  Json resolved = resolved_config(config);
  EXPECT_EQ(resolved.at("schedules").at("weight_decay").at("type"), "cosine");
  EXPECT_TRUE(parse("{}").schedules.items.empty());
  EXPECT_TRUE(parse("null").schedules.items.empty());
}

struct BadSchedules {
  const char* yaml;
  const char* expected;  // part of the message
};

// Test names show the config, not the struct's bytes.
void PrintTo(const BadSchedules& bad, std::ostream* out) { *out << bad.yaml; }

class RefusedSchedules : public ::testing::TestWithParam<BadSchedules> {};

TEST_P(RefusedSchedules, NameThePathAndWhatIsValid) {
  EXPECT_THAT(error_parsing(GetParam().yaml), HasSubstr(GetParam().expected)) << GetParam().yaml;
}

INSTANTIATE_TEST_SUITE_P(
    Values, RefusedSchedules,
    ::testing::Values(
        BadSchedules{"[cosine]",
                     "config error at schedules: expected a mapping of hyper-parameter "
                     "names to schedulers"},
        BadSchedules{"cosine", "config error at schedules: expected a mapping"},
        BadSchedules{"{weight_dacay: cosine}",
                     "config error at schedules.weight_dacay: \"weight_dacay\" cannot "
                     "be scheduled; did you mean \"weight_decay\"?"},
        BadSchedules{"{lr: cosine}", "the learning rate follows `scheduler:`"},
        BadSchedules{"{momentum: cosin}", "unknown scheduler \"cosin\"; did you mean \"cosine\"?"},
        BadSchedules{"{momentum: null}",
                     "config error at schedules.momentum: expected a scheduler"},
        BadSchedules{"{momentum: 3}", "config error at schedules.momentum"},
        BadSchedules{"{beta1: {type: step, gamma: 0}}",
                     "config error at schedules.beta1.gamma: expected number > 0"},
        BadSchedules{"{beta2: {type: cosine, colour: red}}",
                     "config error at schedules.beta2.colour"}));

TEST(ScheduleConfig, CannotChangeOnResume) {
  testing::TempDir dir;
  // Saved without `schedules:`, as runs from before it were.
  dir.write("config.yaml",
            "data: {train: {type: synthetic, task: curve, size: 64}}\n"
            "model: {type: mlp, num_classes: 1}\nloss: mse\nmetrics: []\n"
            "train: {monitor: train/loss}\n");
  EXPECT_NO_THROW(resume_config(dir.path(), {"train.max=3 epochs"}));
  try {
    resume_config(dir.path(), {"schedules.weight_decay=cosine"});
    FAIL() << "a new schedule was accepted on resume";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set changes schedules.weight_decay"));
  }
}

}  // namespace experiment_config_schedules_test
}  // namespace kiln::experiment
