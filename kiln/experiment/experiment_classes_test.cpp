// The text classes of csv splits: data.val and data.test number them as data.train does, so a
// validation file that lacks a class does not renumber the others.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/experiment/experiment.h"
#include "tests/support/temp_dir.h"

namespace kiln::experiment {

namespace experiment_classes_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ExperimentConfig config(const std::string& train, const std::string& val) {
  RawConfig raw;
  raw.tree = parse_config_text("data: {train: {type: csv, file: " + train +
                                   ", target: kind},\n       val: {type: csv, file: " + val +
                                   ", target: kind}}\nmodel: {type: mlp, num_classes: 3}\n",
                               "exp.yaml", false);
  return parse_experiment(raw);
}

TEST(ExperimentClasses, AValidationFileLackingAClassKeepsTheTrainingIds) {
  testing::TempDir dir;
  std::string train = dir.write("train.csv", "x,kind\n1,ant\n2,bee\n3,cat\n");
  Experiment experiment(config(train, dir.write("val.csv", "x,kind\n4,cat\n5,bee\n")), torch::kCPU);
  auto val = experiment.dataset("val");
  EXPECT_THAT(val->info().class_names, ElementsAre("ant", "bee", "cat"));
  EXPECT_TRUE(torch::equal(val->gather(torch::arange(2, torch::kInt64)).target,
                           torch::tensor({2, 1}, torch::kInt64)));
  // A class the training split never had is an error naming it and the classes.
  Experiment unknown(config(train, dir.write("odd.csv", "x,kind\n4,dog\n")), torch::kCPU);
  EXPECT_THAT([&] { unknown.dataset("val"); },
              ::testing::ThrowsMessage<DataError>(
                  HasSubstr("class \"dog\" is none of the classes [ant, bee, cat]")));
}

}  // namespace experiment_classes_test
}  // namespace kiln::experiment
