// Train cycles: each stage's config is the previous one with its entry merged over it, checked as
// a whole config before any work, with errors at stages[i].KEY; keys that would change what is
// trained or measured are refused, naming the key.

#include "kiln/experiment/stages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace kiln::experiment {
namespace stages_test {

using ::testing::HasSubstr;

constexpr const char* kBase =
    "name: s\n"
    "data: {train: {type: synthetic, task: curve, size: 64}}\n"
    "model: {type: mlp, num_classes: 1, hidden: [8]}\n"
    "loss: mse\n"
    "metrics: []\n"
    "optimizer: {type: adam, lr: 0.001, betas: [0.8, 0.9]}\n"
    "scheduler: cosine\n"
    "train: {monitor: train/loss, max: 3 epochs}\n";

std::vector<Stage> plan(const std::string& stages) {
  testing::TempDir dir;
  RawConfig raw = load_config({dir.write("exp.yaml", std::string(kBase) + stages)}, {});
  return plan_stages(raw, parse_experiment(raw));
}

// The ConfigError planning `stages` throws.
ConfigError plan_error(const std::string& stages) {
  try {
    plan(stages);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << stages;
  return ConfigError("", "", "");
}

TEST(Stages, WithoutStagesTheConfigIsTheOnlyStage) {
  std::vector<Stage> stages = plan("");
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_FALSE(stages[0].staged());
  EXPECT_EQ(stages[0].config.train.max.to_string(), "3 epochs");
}

TEST(Stages, EachStageMergesOverThePreviousOne) {
  std::vector<Stage> stages = plan(
      "stages:\n"
      "  - {name: head, train: {max: 2 epochs, freeze: [layers.0]}, optimizer: {lr: 0.01}}\n"
      "  - {name: all, train: {freeze: []}, optimizer: {lr: 0.0001}}\n");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[1].title(), "stage 2/2: all");
  EXPECT_EQ(stages[0].config.train.freeze, std::vector<std::string>{"layers.0"});
  EXPECT_TRUE(stages[1].config.train.freeze.empty());
  EXPECT_EQ(stages[1].config.train.max.to_string(), "2 epochs") << "not carried from stage 1";
  EXPECT_EQ(stages[0].config.optimizer.spec["lr"], 0.01);
  EXPECT_EQ(stages[1].config.optimizer.spec["lr"], 0.0001);
  EXPECT_EQ(stages[1].config.optimizer.spec["betas"], Json({0.8, 0.9})) << "not carried";
  EXPECT_TRUE(stages[1].config.stages.entries.empty());
}

TEST(Stages, ANewComponentTypeReplacesTheOldOneWholeAndANameTakesOptions) {
  std::vector<Stage> stages =
      plan("stages: [{optimizer: {type: sgd, lr: 0.1}, scheduler: {warmup: 10 steps}}]\n");
  EXPECT_EQ(stages[0].name, "stage1");
  EXPECT_EQ(stages[0].config.optimizer.type(), "sgd");  // adam's betas left behind
  EXPECT_EQ(stages[0].config.scheduler.type(), "cosine");
  EXPECT_EQ(stages[0].config.scheduler.spec["warmup"], "10 steps");
}

TEST(Stages, ABadValueIsNamedAtItsStageWithItsFile) {
  ConfigError e = plan_error("stages: [{name: a}, {name: b, train: {max: 3 parsecs}}]\n");
  EXPECT_EQ(e.path(), "stages[1].train.max");
  EXPECT_THAT(e.origin(), HasSubstr("exp.yaml"));
  EXPECT_THAT(e.what(), HasSubstr("(in stage 2/2: b)"));
  ConfigError typo = plan_error("stages: [{optimiser: {lr: 0.1}}]\n");
  EXPECT_EQ(typo.path(), "stages[0].optimiser");
  EXPECT_THAT(typo.what(), HasSubstr("did you mean \"optimizer\""));
}

TEST(Stages, AnErrorFromAnInheritedValueIsNamedWhereTheValueWasWritten) {
  // A freeze path is only checked against the model when a stage starts; stage 2 inherits
  // stage 1's list, so its bad path is reported in stage 1's entry.
  std::vector<Stage> stages =
      plan("stages: [{name: a, train: {freeze: [layers.0, nope]}}, {name: b}]\n");
  ConfigError e = stages[1].locate(ConfigError("train.freeze[1]", "", "no module \"nope\""));
  EXPECT_EQ(e.path(), "stages[0].train.freeze[1]");
  EXPECT_THAT(e.origin(), HasSubstr("exp.yaml"));
  EXPECT_THAT(e.what(), HasSubstr("(in stage 2/2: b)"));
  // A key no stage sets keeps its top-level name.
  EXPECT_EQ(stages[1].locate(ConfigError("loss", "", "x")).path(), "loss");
}

TEST(Stages, KeysThatShapeWhatIsTrainedOrMeasuredAreRefusedByName) {
  ConfigError model = plan_error("stages: [{name: a, model: {hidden: [16]}}]\n");
  EXPECT_EQ(model.path(), "stages[0].model");
  EXPECT_THAT(model.what(), HasSubstr("a stage cannot change model: the weights carry over"));
  EXPECT_THAT(model.what(), HasSubstr("a stage may change optimizer, scheduler"));
  ConfigError data = plan_error("stages: [{}, {data: {batch_size: 8, take: 10}}]\n");
  EXPECT_EQ(data.path(), "stages[1].data.take");
  EXPECT_THAT(data.what(), HasSubstr("same examples"));
  EXPECT_EQ(plan_error("stages: [{seed: 4}]\n").path(), "stages[0].seed");
  EXPECT_EQ(plan_error("stages: [{train: {monitor: train/loss}}]\n").path(),
            "stages[0].train.monitor");
  EXPECT_EQ(plan_error("stages: [{runtime: {threads: 1}}]\n").path(), "stages[0].runtime");
}

TEST(Stages, AnEntryMustBeANamedMapping) {
  EXPECT_EQ(plan_error("stages: [finetune]\n").path(), "stages[0]");
  EXPECT_EQ(plan_error("stages: [{name: 3}]\n").path(), "stages[0].name");
  EXPECT_EQ(plan_error("stages: {name: a}\n").path(), "stages");
}

TEST(MergeStage, ListsReplaceAndMappingsMerge) {
  Json base = Json::parse(R"({"a": {"x": 1, "y": [1, 2]}, "c": "adam"})");
  merge_stage(base, Json::parse(R"({"a": {"y": [3]}, "c": {"lr": 2}})"));
  EXPECT_EQ(base, Json::parse(R"({"a": {"x": 1, "y": [3]}, "c": {"type": "adam", "lr": 2}})"));
}

}  // namespace stages_test
}  // namespace kiln::experiment
