// kiln predict on tabular files, and examples served to kiln serve: the rows they give a model
// trained through feature columns are the very rows training gave it for the same records, bit
// for bit, labelled or not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/experiment/experiment.h"
#include "kiln/experiment/open_model.h"
#include "kiln/export/columns_example_encoder.h"
#include "kiln/export/export.h"
#include "kiln/export/predict_inputs.h"
#include "kiln/serving/rest/example_request.h"
#include "kiln/serving/serving_error.h"
#include "tests/support/temp_dir.h"

namespace kiln::exports {
using namespace experiment;
namespace predict_inputs_test {

using ::testing::HasSubstr;

const char* kRows =
    "color,size,shape,label\nred,1.5,circle,in\nblue,7,square,out\ngreen,3,triangle,in\n"
    "purple,9.25,circle,out\n";

experiment::ExperimentConfig tabular_config(const std::string& train) {
  RawConfig raw;
  raw.tree = parse_config_text(
      "data: {train: {type: csv, file: " + train +
          ", inputs: {wide: [color, shape], deep: [size, color_index]}, target: label},\n"
          "       columns: {color: categorical, shape: {type: categorical, hash_buckets: 5},\n"
          "                 size: {type: numeric, normalize: zscore},\n"
          "                 color_index: {type: categorical, feature: color, output: index, "
          "embedding_dim: 2}}}\n"
          "model: {type: wide_deep, num_classes: 2, hidden: [4]}\nloss: cross_entropy\n",
      "exp.yaml", false);
  return experiment::parse_experiment(raw);
}

TEST(PredictInputs, TabularFilesGiveTheRowsTrainingGave) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv", kRows);
  Experiment experiment(tabular_config(train), torch::kCPU);
  auto dataset = experiment.dataset("train");
  torch::Tensor trained = dataset->gather(torch::arange(dataset->size(), torch::kInt64)).input;
  ModelInput input = model_inputs(*dataset).front();
  Json reader = evaluation_data_spec(experiment.config());
  Json preprocessing = experiment.preprocessing();

  torch::Tensor labelled = read_predict_inputs(train, input, reader, preprocessing).examples;
  EXPECT_TRUE(torch::equal(labelled, trained));
  // The same rows without their label column.
  std::string unlabelled = dir.write(
      "rows.csv",
      "color,size,shape\nred,1.5,circle\nblue,7,square\ngreen,3,triangle\npurple,9.25,circle\n");
  EXPECT_TRUE(torch::equal(read_predict_inputs(unlabelled, input, reader, preprocessing).examples,
                           trained));
  // Without the fitted columns there is nothing to write the rows with.
  EXPECT_THAT([&] { read_predict_inputs(train, input, reader, nullptr); },
              ::testing::ThrowsMessage<UsageError>(HasSubstr("no preprocessing.json")));
}

TEST(PredictInputs, ServedExamplesGiveTheRowsTrainingGave) {
  testing::TempDir dir;
  Experiment experiment(tabular_config(dir.write("train.csv", kRows)), torch::kCPU);
  auto dataset = experiment.dataset("train");
  torch::Tensor trained = dataset->gather(torch::arange(dataset->size(), torch::kInt64)).input;
  ModelInput input = model_inputs(*dataset).front();
  ColumnsExampleEncoder encoder(columns_for_input(experiment.preprocessing(), input, "run"),
                                input.name);
  // As a client sends them: numbers as JSON numbers (7 an integer), the label left in.
  serving::ExamplesRequest request = serving::parse_examples_request(R"({"examples": [
      {"color": "red", "size": 1.5, "shape": "circle", "label": "in"},
      {"color": "blue", "size": 7, "shape": "square"},
      {"color": "green", "size": 3.0, "shape": "triangle"},
      {"color": "purple", "size": 9.25, "shape": "circle"}]})");
  serving::HostTensor rows = encoder.encode(request.examples).at(input.name);
  ASSERT_EQ(rows.shape, trained.sizes().vec());
  torch::Tensor served = torch::tensor(rows.numbers, torch::kFloat64).to(torch::kFloat32);
  EXPECT_TRUE(torch::equal(served.reshape(trained.sizes()), trained));
  EXPECT_THAT(encoder.features(), ::testing::ElementsAre("color", "shape", "size"));
  // A string where the column reads numbers is refused, naming the example and the feature.
  request = serving::parse_examples_request(
      R"({"examples": [{"color": "red", "size": 1}, {"color": "red", "size": "big"}]})");
  EXPECT_THAT([&] { encoder.encode(request.examples); },
              ::testing::ThrowsMessage<serving::ServingError>(
                  HasSubstr("record 1: feature \"size\" holds the string \"big\"")));
}

}  // namespace predict_inputs_test
}  // namespace kiln::exports
