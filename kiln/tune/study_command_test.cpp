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

}  // namespace study_command_test
}  // namespace kiln::tune
