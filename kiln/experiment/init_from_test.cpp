// model.init_from: whole models and renamed submodules load from safetensors files, checkpoint
// directories and run directories; mismatches are reported, or refused when strict.

#include "kiln/experiment/init_from.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "kiln/core/error.h"
#include "kiln/engine/checkpoint.h"
#include "tests/support/models.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {

namespace init_from_test {

using ::testing::HasSubstr;

std::shared_ptr<models::Model> two_layers(int64_t hidden = 4) {
  return testing::build_sequential(
      "layers: [{type: linear, out: " + std::to_string(hidden) + "}, relu, {type: linear, out: 2}]",
      {3});
}

std::string saved(const testing::TempDir& dir, const torch::nn::Module& model) {
  std::string path = dir.file("weights.safetensors");
  std::ofstream(path, std::ios::binary) << engine::serialize_weights(model);
  return path;
}

InitFrom from(const std::string& path, std::map<std::string, std::string> map = {},
              bool strict = true) {
  InitFrom init;
  init.path = path;
  init.map = std::move(map);
  init.strict = strict;
  return init;
}

TEST(InitFrom, LoadsAWholeModelFromASafetensorsFile) {
  testing::TempDir dir;
  auto source = two_layers(), target = two_layers();
  InitReport report = load_initial_weights(from(saved(dir, *source)), *target);
  EXPECT_EQ(report.loaded, 4);
  EXPECT_TRUE(report.missing.empty() && report.unexpected.empty());
  for (const auto& item : source->named_parameters())
    EXPECT_TRUE(torch::equal(item.value(), target->named_parameters()[item.key()])) << item.key();
}

TEST(InitFrom, AMapLoadsOnlyTheRenamedPrefixes) {
  testing::TempDir dir;
  auto source = two_layers();
  auto target = testing::build_sequential(
      "layers: [{type: linear, out: 4}, relu, {type: linear, out: 2}, tanh, {type: linear, out: "
      "4}]",
      {3});
  torch::Tensor untouched = target->named_parameters()["layers.2.weight"].clone();
  InitReport report =
      load_initial_weights(from(saved(dir, *source), {{"layers.0.", "layers.0."}}), *target);
  EXPECT_EQ(report.loaded, 2);
  EXPECT_TRUE(torch::equal(target->named_parameters()["layers.0.weight"],
                           source->named_parameters()["layers.0.weight"]));
  EXPECT_TRUE(torch::equal(target->named_parameters()["layers.2.weight"], untouched));
}

TEST(InitFrom, StrictRefusesWhatDoesNotFitAndLenientReportsIt) {
  testing::TempDir dir;
  std::string path = saved(dir, *two_layers());
  auto bigger = testing::build_sequential(
      "layers: [{type: linear, out: 4}, relu, {type: linear, out: 2}, {type: linear, out: 1}]",
      {3});
  try {
    load_initial_weights(from(path), *bigger);
    FAIL() << "loaded a checkpoint that lacks layers.3";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "model.init_from");
    EXPECT_THAT(e.what(), HasSubstr("layers.3.weight"));
    EXPECT_THAT(e.what(), HasSubstr("strict: false"));
  }
  InitReport report = load_initial_weights(from(path, {}, false), *bigger);
  EXPECT_EQ(report.loaded, 4);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"layers.3.bias", "layers.3.weight"}));
  EXPECT_THAT(init_report_text(report),
              HasSubstr("missing (kept as initialised): layers.3.bias, layers.3.weight"));

  auto renamed = testing::build_sequential("layers: [{type: linear, out: 4}]", {3});
  InitReport extra = load_initial_weights(from(path, {}, false), *renamed);
  EXPECT_EQ(extra.unexpected, (std::vector<std::string>{"layers.2.bias", "layers.2.weight"}));
}

TEST(InitFrom, AShapeMismatchIsAlwaysAnError) {
  testing::TempDir dir;
  std::string path = saved(dir, *two_layers(4));
  auto wider = two_layers(5);
  try {
    load_initial_weights(from(path, {}, false), *wider);
    FAIL() << "loaded a width-4 layer into a width-5 one";
  } catch (const ConfigError& e) {
    // The file holds tensors in name order: layers.0.bias comes first.
    EXPECT_THAT(
        e.what(),
        HasSubstr("\"layers.0.bias\" has shape [4] but the model's \"layers.0.bias\" is [5]"));
  }
}

TEST(InitFrom, ReadsCheckpointAndRunDirectories) {
  testing::TempDir dir;
  auto source = two_layers(), target = two_layers();
  engine::CheckpointContents contents;
  contents.step = 7;
  contents.model = source.get();
  engine::save_checkpoint(dir.file("run/checkpoints"), contents);
  InitReport report = load_initial_weights(from(dir.file("run")), *target);
  EXPECT_THAT(report.source, HasSubstr("step-000000007/model.safetensors"));
  EXPECT_TRUE(torch::equal(target->named_parameters()["layers.2.bias"],
                           source->named_parameters()["layers.2.bias"]));
  EXPECT_THROW(load_initial_weights(from(dir.file("nowhere")), *target), ConfigError);
  EXPECT_THROW(load_initial_weights(from(dir.file("")), *target), ConfigError);
}

}  // namespace init_from_test
}  // namespace kiln::experiment
