// An experiment's share of the data for one rank of a job: training batches of the job's batch
// divided among the ranks (or each rank's, with data.batch_per_rank), validation over every
// example once between the ranks, and a batch that does not divide a config error naming it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/experiment/experiment.h"

namespace kiln::experiment {

namespace experiment_shard_test {

using ::testing::HasSubstr;

Experiment experiment(int64_t rank, int64_t world, const std::string& data_extra = "") {
  RawConfig raw;
  raw.tree = parse_config_text(
      "data: {train: {type: synthetic, task: curve, size: 10, seed: 1},\n"
      "       val: {type: synthetic, task: curve, size: 7, seed: 2}, batch_size: 4" +
          data_extra +
          "}\n"
          "model: {type: mlp, num_classes: 1, hidden: [4]}\nloss: mse\nmetrics: []\n",
      "exp.yaml", false);
  return Experiment(parse_experiment(raw), torch::kCPU, rank, world);
}

TEST(ExperimentShard, SplitsTheJobsBatchAndDealsTheValidationExamplesOutWhole) {
  Experiment rank1 = experiment(1, 2);
  data::Loader train = rank1.loader("train");
  EXPECT_EQ(train.examples_per_epoch(), 5);  // 10 examples, 2 ranks
  EXPECT_EQ(train.batches_per_epoch(), 3);   // batches of 2: the job's 4 split in two
  EXPECT_EQ(rank1.job_batch(), 4);
  // 7 validation examples: rank 0 takes 4, rank 1 the other 3.
  EXPECT_EQ(rank1.loader("val").examples_per_epoch(), 3);
  Experiment rank0 = experiment(0, 2);
  EXPECT_EQ(rank0.loader("val").examples_per_epoch(), 4);
}

TEST(ExperimentShard, BatchPerRankKeepsEachRanksBatchAndCountsTheJobs) {
  Experiment rank = experiment(0, 2, ", batch_per_rank: true");
  EXPECT_EQ(rank.loader("train").batches_per_epoch(), 2);  // 5 examples in batches of 4
  EXPECT_EQ(rank.job_batch(), 8);
}

TEST(ExperimentShard, ABatchThatDoesNotSplitEvenlyIsAConfigErrorNamingIt) {
  Experiment rank = experiment(0, 3);
  try {
    rank.loader("train");
    FAIL() << "a batch of 4 split among 3 ranks";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "data.batch_size");
    EXPECT_THAT(e.what(), HasSubstr("4 examples do not split evenly among 3 ranks"));
    EXPECT_THAT(e.what(), HasSubstr("data.batch_per_rank: true"));
  }
}

}  // namespace experiment_shard_test
}  // namespace kiln::experiment
