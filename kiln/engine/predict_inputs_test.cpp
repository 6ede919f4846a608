// kiln predict on tabular files: the rows it gives a model trained through feature columns are
// the very rows training gave it for the same records, bit for bit, labelled or not.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/engine/experiment.h"
#include "kiln/engine/export.h"
#include "kiln/engine/open_model.h"
#include "kiln/engine/predict_inputs.h"
#include "tests/support/temp_dir.h"

namespace kiln::engine {
namespace predict_inputs_test {

using ::testing::HasSubstr;

const char* kRows =
    "color,size,shape,label\nred,1.5,circle,in\nblue,7,square,out\ngreen,3,triangle,in\n"
    "purple,9.25,circle,out\n";

ExperimentConfig tabular_config(const std::string& train) {
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
  return parse_experiment(raw);
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

}  // namespace predict_inputs_test
}  // namespace kiln::engine
