// A model opened from a checkpoint or run folder alone: inputs.json read and refused when
// malformed, the model built for the saved inputs with the saved weights, no data read (the
// config's data files do not exist).

#include "kiln/experiment/open_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/config.h"
#include "kiln/core/text_file.h"
#include "kiln/data/dtype_names.h"
#include "kiln/engine/checkpoint.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {

namespace open_model_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

constexpr const char* kConfig = R"(
data:
  train: {type: idx, images: nowhere-images.gz, labels: nowhere-labels.gz}
model: {type: sequential, layers: [flatten, {type: linear, out: 3}]}
)";

// A checkpoint of kConfig's model for examples of shape [2, 5] in `dir`; returns its directory.
// Without `with_inputs` the checkpoint holds no inputs.json, as the run folder's is then read.
std::string saved_checkpoint(const kiln::testing::TempDir& dir, models::Model** built = nullptr,
                             bool with_inputs = true) {
  ExperimentConfig config = parse_experiment(load_config({dir.write("c.yaml", kConfig)}, {}));
  static std::shared_ptr<models::Model> model;
  model = models::build_model(config.model.network, {2, 5});
  if (built) *built = model.get();
  fs::create_directories(dir.file("run/checkpoints"));
  engine::CheckpointContents contents;
  contents.step = 7;
  contents.model = model.get();
  contents.config_yaml = to_yaml(resolved_config(config));
  if (with_inputs)
    contents.inputs = inputs_json({ModelInput{"input", {2, 5}, torch::kUInt8, std::nullopt}});
  return engine::save_checkpoint(dir.file("run/checkpoints"), contents);
}

TEST(OpenModel, BuildsTheSavedModelWithoutReadingData) {
  kiln::testing::TempDir dir;
  models::Model* saved = nullptr;
  std::string checkpoint = saved_checkpoint(dir, &saved);
  OpenedModel opened = open_model(checkpoint, "last", torch::kCPU);
  EXPECT_EQ(opened.checkpoint, checkpoint);
  EXPECT_EQ(opened.inputs.front().shape, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(opened.inputs.front().dtype, torch::kUInt8);
  EXPECT_FALSE(opened.model->is_training());
  auto mine = opened.model->parameters();
  auto theirs = saved->parameters();
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) EXPECT_TRUE(torch::equal(mine[i], theirs[i]));
}

TEST(OpenModel, InputsRoundTripThroughJson) {
  std::vector<ModelInput> inputs = {{"input", {1, 28, 28}, torch::kFloat32, std::nullopt}};
  Json json = inputs_json(inputs);
  EXPECT_EQ(json.dump(), R"({"inputs":[{"name":"input","shape":[1,28,28],"dtype":"float32"}]})");
  std::vector<ModelInput> back = parse_inputs(json, "inputs.json");
  EXPECT_EQ(back.front().shape, inputs.front().shape);
  EXPECT_EQ(back.front().dtype, torch::kFloat32);
  EXPECT_EQ(data::dtype_name(torch::kInt64), "int64");
  EXPECT_FALSE(back.front().image.has_value());
}

TEST(OpenModel, AnImageInputRoundTripsAndMustMakeTheShape) {
  std::vector<ModelInput> inputs = {
      {"input", {1, 28, 28}, torch::kFloat32, io::ImageInput{1, 28, 28, true, 1.0 / 255}}};
  std::vector<ModelInput> back = parse_inputs(inputs_json(inputs), "inputs.json");
  ASSERT_TRUE(back.front().image.has_value());
  EXPECT_TRUE(*back.front().image == *inputs.front().image);
  inputs.front().shape = {28, 28, 1};
  try {
    parse_inputs(inputs_json(inputs), "run/inputs.json");
    FAIL() << "accepted";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("run/inputs.json"));
    EXPECT_THAT(e.what(), HasSubstr("do not make the input's shape"));
  }
}

TEST(OpenModel, MalformedInputsAreDataErrorsNamingTheFile) {
  for (const char* text : {R"({"inputs": []})", R"({"inputs": [{"name": "input"}]})", R"([1, 2])",
                           R"({"inputs": [{"shape": [1, -2], "dtype": "float32"}]})",
                           R"({"inputs": [{"shape": [3], "dtype": "complex"}]})"}) {
    SCOPED_TRACE(text);
    try {
      parse_inputs(Json::parse(text), "run/inputs.json");
      FAIL() << "accepted";
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), "run/inputs.json");
    }
  }
}

TEST(OpenModel, ARunsInputsServeACheckpointWithoutThemAndADamagedOneIsNamed) {
  kiln::testing::TempDir dir;
  std::string run = dir.file("run");
  std::string checkpoint = saved_checkpoint(dir, nullptr, /*with_inputs=*/false);
  write_file_atomic(run + "/config.yaml", read_text_file(checkpoint + "/config.yaml"));
  write_file_atomic(run + "/inputs.json",
                    inputs_json({{"input", {2, 5}, torch::kFloat32, std::nullopt}}).dump());
  EXPECT_EQ(open_model(run, "last", torch::kCPU).inputs.front().shape,
            (std::vector<int64_t>{2, 5}));
  write_file_atomic(run + "/inputs.json", "{\"inputs\": [");
  try {
    open_model(run, "last", torch::kCPU);
    FAIL() << "opened";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), run + "/inputs.json");
    EXPECT_GE(e.offset(), 0);
  }
}

TEST(OpenModel, TheTrainingDataLabelsComeAlongAndMalformedOnesAreNamed) {
  kiln::testing::TempDir dir;
  std::string run = dir.file("run");
  std::string checkpoint = saved_checkpoint(dir, nullptr, /*with_inputs=*/false);
  write_file_atomic(run + "/config.yaml", read_text_file(checkpoint + "/config.yaml"));
  write_file_atomic(
      run + "/inputs.json",
      inputs_json({{"input", {2, 5}, torch::kFloat32, std::nullopt}}, {"no", "yes"}).dump());
  EXPECT_THAT(open_model(run, "last", torch::kCPU).labels, ::testing::ElementsAre("no", "yes"));
  write_file_atomic(run + "/inputs.json",
                    R"({"inputs": [{"shape": [2, 5]}], "labels": ["no", 1]})");
  try {
    open_model(run, "last", torch::kCPU);
    FAIL() << "opened";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), run + "/inputs.json");
    EXPECT_THAT(e.what(), HasSubstr("labels is a list of names"));
  }
  write_file_atomic(run + "/inputs.json",
                    R"({"inputs": [{"shape": [2, 5]}], "labels": ["no", "yes", "no"]})");
  try {
    open_model(run, "last", torch::kCPU);
    FAIL() << "opened";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("labels names the class \"no\" twice"));
  }
}

}  // namespace open_model_test
}  // namespace kiln::experiment
