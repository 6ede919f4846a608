// What `--resume` does before any model is built: which keys a --set may change, which run it
// finds on its own, and how the run's files are trimmed back to the checkpoint it continues.

#include "kiln/experiment/resume.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"
#include "kiln/experiment/experiment_config.h"  // the engine namespace this file uses
#include "kiln/io/manifest.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {

namespace resume_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kConfig =
    "name: r\n"
    "data: {train: {type: synthetic, task: curve, size: 64}}\n"
    "model: {type: mlp, num_classes: 1}\n"
    "loss: mse\n"
    "optimizer: {type: adam, lr: 0.001}\n"
    "metrics: []\n"
    "train: {monitor: train/loss}\n";

TEST(ChangedKeys, NamesEveryDottedPathThatDiffers) {
  Json a = Json::parse(R"({"train": {"max": "1 epoch", "mode": "min"}, "seed": 1, "l": [1, 2]})");
  Json b = Json::parse(R"({"train": {"max": "2 epochs", "mode": "min"}, "seed": 1, "l": [1],
                           "new": {"x": 1}})");
  EXPECT_THAT(changed_keys(a, b), ElementsAre("l", "new.x", "train.max"));
  EXPECT_TRUE(changed_keys(a, a).empty());
}

TEST(ResumeConfig, AcceptsResumableKeysAndRefusesOthersByName) {
  testing::TempDir dir;
  dir.write("config.yaml", kConfig);
  RawConfig config = resume_config(dir.path(), {"train.max=3 epochs", "data.workers=0"});
  EXPECT_EQ(config.tree["train"]["max"], "3 epochs");
  try {
    resume_config(dir.path(), {"train.max=3 epochs", "optimizer.lr=0.5"});
    FAIL() << "a changed learning rate was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set changes optimizer.lr"));
    EXPECT_THAT(e.what(), HasSubstr("resumable keys: train.max"));
  }
  // A --set that repeats the saved value changes nothing and is fine.
  EXPECT_NO_THROW(resume_config(dir.path(), {"seed=1"}));
}

// A checkpoint holding `config` as the config it was trained with, as save_checkpoint lays it out.
void checkpoint_with(const testing::TempDir& run, const std::string& config) {
  std::string dir = run.file("checkpoints/step-000000010");
  run.write("checkpoints/step-000000010/config.yaml", config);
  run.write("checkpoints/step-000000010/MANIFEST", io::manifest_line("config.yaml", config));
  run.write("checkpoints/latest", "step-000000010\n");
}

// A hand edit of the run's config.yaml once changed the learning rate of a resumed run unseen: it
// is held to what --set may change, against the config the checkpoint was trained with.
TEST(ResumeConfig, AHandEditOfTheRunsConfigIsCheckedAgainstItsCheckpoint) {
  testing::TempDir dir;
  checkpoint_with(dir, kConfig);
  std::string edited = kConfig;
  edited.replace(edited.find("lr: 0.001"), 9, "lr: 0.5");
  dir.write("config.yaml", edited);
  try {
    resume_config(dir.path(), {});
    FAIL() << "a hand-edited learning rate was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(dir.file("config.yaml") + " (edited since " +
                                    dir.file("checkpoints/step-000000010") +
                                    " was saved) changes optimizer.lr"));
  }
  // A resumable key may be edited by hand as it may be given with --set.
  std::string longer = kConfig;
  longer.replace(longer.rfind("train: {"), 8, "train: {max: 9 epochs, ");
  dir.write("config.yaml", longer);
  EXPECT_EQ(resume_config(dir.path(), {}).tree["train"]["max"], "9 epochs");
  // A checkpoint whose MANIFEST no longer matches is no reference (resuming then refuses the run
  // itself, as no checkpoint is valid): the run's config.yaml is taken as it is.
  dir.write("checkpoints/step-000000010/config.yaml", std::string(kConfig) + "# edited\n");
  EXPECT_EQ(resume_config(dir.path(), {}).tree["train"]["max"], "9 epochs");
}

TEST(ResumeConfig, AStageKeyIsNamedByItsStageAndResumableAsAtTheTop) {
  testing::TempDir dir;
  dir.write("config.yaml", std::string(kConfig) +
                               "stages: [{name: a, train: {max: 1 epoch}}, {name: b, optimizer: "
                               "{lr: 0.0001}}]\n");
  RawConfig config = resume_config(dir.path(), {"stages[1].train.max=4 epochs"});
  EXPECT_EQ(config.tree["stages"][1]["train"]["max"], "4 epochs");
  try {
    resume_config(dir.path(), {"stages[1].optimizer.lr=0.5"});
    FAIL() << "a stage's changed learning rate was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set changes stages[1].optimizer.lr"));
  }
}

TEST(RemoveCheckpointsAfter, RemovesLaterAndTemporaryDirectoriesOnly) {
  testing::TempDir dir;
  for (const char* name :
       {"step-000000004", "step-000000008", "step-000000012", "step-000000016.tmp", "notes"})
    fs::create_directories(dir.file(std::string("checkpoints/") + name));
  remove_checkpoints_after(dir.file("checkpoints"), 8);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir.file("checkpoints")))
    left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_THAT(left, ElementsAre("notes", "step-000000004", "step-000000008"));
}

}  // namespace resume_test
}  // namespace kiln::experiment
