// `kiln tune`'s policy without a trial run: what a new study needs of its config, what a resume
// needs, and the --space file.

#include "kiln/tune/study_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "tests/support/temp_dir.h"

namespace kiln::tune {
namespace study_command_test {

using ::testing::HasSubstr;

StudyCommand command_in(const kiln::testing::TempDir& dir) {
  StudyCommand command;
  command.config.tree = {{"name", "x"}};
  command.runs_root = dir.path();
  command.study = "s";
  command.read_experiment = [](const RawConfig&) { return ExperimentFacts{}; };
  command.now = [] { return std::string("2026-11-28T00:00:00Z"); };
  return command;
}

TEST(StudyCommand, ANewStudyNeedsATuneSectionAndAResumeNeedsTheStudysNameAndItsOwnSpace) {
  kiln::testing::TempDir dir;
  StudyCommand command = command_in(dir);
  try {
    run_study_command(command);
    FAIL() << "started a study of a config without tune:";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the config has no tune: section"));
  }
  command.resume = true;
  command.study = "";
  try {
    run_study_command(command);
    FAIL() << "resumed a study without its name";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--resume needs --study NAME"));
  }
  command.study = "s";
  command.space_given = true;
  EXPECT_THROW(run_study_command(command), UsageError);
}

TEST(StudyCommand, ASpaceFileMustMapPathsAndStandsInForTuneSpace) {
  kiln::testing::TempDir dir;
  RawConfig config;
  config.tree = {{"name", "x"}};
  write_file_atomic(dir.file("list.yaml"), "- 1\n- 2\n");
  EXPECT_THROW(use_space_file(config, dir.file("list.yaml")), ConfigError);
  write_file_atomic(dir.file("space.yaml"),
                    "optimizer.lr: {type: loguniform, low: 1.0e-4, high: 0.1}\n");
  use_space_file(config, dir.file("space.yaml"));
  EXPECT_EQ(config.tree["tune"]["space"]["optimizer.lr"]["type"], "loguniform");
  config.tree["tune"] = 3;
  EXPECT_THROW(use_space_file(config, dir.file("space.yaml")), ConfigError);
}

TEST(StudyCommand, AStudyOfAProgramHoldsOnlyItsTuneSectionWithTheMetricAndMode) {
  RawConfig config;
  config.tree = Json::parse(R"({"name": "p", "seed": 3, "tune": {"command": ["python3", "t.py",
      "{lr}"], "metric": "loss", "mode": "min", "space": {"lr": {"type": "uniform", "low": 0,
      "high": 1}}}})");
  EXPECT_TRUE(runs_a_program(config));
  ExperimentFacts facts = program_study_facts(config);
  EXPECT_EQ(facts.seed, 3);
  ASSERT_TRUE(facts.tune);
  EXPECT_EQ(facts.tune->command.size(), 3u);
  auto refused = [&](const char* key, const Json& value, const char* why) {
    RawConfig bad = config;
    bad.tree[nlohmann::json::json_pointer(key)] = value;
    EXPECT_THAT([&] { program_study_facts(bad); },
                ::testing::ThrowsMessage<ConfigError>(HasSubstr(why)))
        << key;
  };
  refused("/model", Json::object(), "holds only version, name, seed and tune");
  refused("/tune/metric", "", "needs the name of the value it reports");
  refused("/tune/mode", "auto", "needs min or max");
  refused("/tune/nproc", 2, "a program (tune.command) starts its own");
  refused("/seed", -1, "a whole number from 0");
  refused("/tune/command", "python3 t.py", "tune.command");
  RawConfig plain;
  plain.tree = {{"name", "x"}, {"tune", {{"command", Json::array()}}}};
  EXPECT_FALSE(runs_a_program(plain));
}

}  // namespace study_command_test
}  // namespace kiln::tune
