// The trainer's seams for data-parallel training, driven by two ranks that are threads of this
// process (ThreadRanks): the gradients are averaged once per optimizer step and never on an
// accumulation step, so the ranks keep the same weights while training on different data; and a
// NaN that one rank sees is skipped, or stops training, on both.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "kiln/core/text_file.h"
#include "kiln/engine/trainer_test_rig.h"
#include "tests/support/thread_ranks.h"

namespace kiln::engine {
namespace distributed_trainer_test {

using test_rig::PoisonedLoss;
using test_rig::TrainerRig;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

void copy_weights(const torch::nn::Module& from, torch::nn::Module& to) {
  torch::NoGradGuard no_grad;
  auto source = from.parameters();
  auto target = to.parameters();
  for (size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

bool same_weights(const torch::nn::Module& a, const torch::nn::Module& b) {
  auto left = a.parameters();
  auto right = b.parameters();
  for (size_t i = 0; i < left.size(); ++i)
    if (!torch::equal(left[i], right[i])) return false;
  return true;
}

// Rank 0 and rank 1: the same model, the same initial weights, other training examples.
struct TwoRanks {
  TrainerRig rank0{8, 6, "{type: sgd, lr: 0.1}", 2, torch::kCPU, 1};
  TrainerRig rank1{8, 6, "{type: sgd, lr: 0.1}", 2, torch::kCPU, 7};
  testing::ThreadRanks group{2};
  int reductions[2] = {0, 0};
  std::string errors[2];
  TrainResult results[2];

  TwoRanks() {
    copy_weights(*rank0.model, *rank1.model);
    rank0.context = group.context(0, &reductions[0]);
    rank1.context = group.context(1, &reductions[1]);
  }

  // Trains both ranks at once, each on its own thread; errors[r] is what rank r threw.
  void fit(const TrainOptions& options) {
    auto run = [&](int rank) {
      try {
        results[rank] = (rank == 0 ? rank0 : rank1).fit(options);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    };
    std::thread second(run, 1);
    run(0);
    second.join();
  }
};

TEST(DistributedTrainer, GradientsAreAveragedOncePerStepNeverOnAnAccumulationStep) {
  TwoRanks ranks;
  TrainerRig alone{8, 6, "{type: sgd, lr: 0.1}", 2, torch::kCPU, 1};
  copy_weights(*ranks.rank0.model, *alone.model);
  // 4 batches an epoch, 2 to a step: 2 steps an epoch, 4 in all, over 8 backward passes.
  TrainOptions options = test_rig::train_options("2 epochs", "1 epoch", "2 steps");
  options.accumulate = 2;
  ranks.fit(options);
  alone.fit(options);
  ASSERT_EQ(ranks.errors[0], "");
  ASSERT_EQ(ranks.errors[1], "");
  EXPECT_EQ(ranks.reductions[0], 4);
  EXPECT_EQ(ranks.reductions[1], 4);
  // The mean gradient of two data shards: the ranks agree, and differ from rank 0's data alone.
  EXPECT_TRUE(same_weights(*ranks.rank0.model, *ranks.rank1.model));
  EXPECT_FALSE(same_weights(*ranks.rank0.model, *alone.model));
}

// Each meeting costs every rank the wait for the slowest: the gradients (with the NaN flag) and
// one small all-reduce that decides logging, validation and stopping together. 4 steps an epoch:
// 8 more steps are 2 more epochs, whose ends vote once more each.
TEST(DistributedTrainer, AnOrdinaryStepMeetsTheOtherRanksTwice) {
  auto meetings = [](const std::string& max) {
    TwoRanks ranks;
    ranks.fit(test_rig::train_options(max, "100 steps", "100 steps"));
    EXPECT_EQ(ranks.errors[0], "");
    return ranks.group.meetings();
  };
  EXPECT_EQ(meetings("16 steps") - meetings("8 steps"), 8 * 2 + 2);
}

TEST(DistributedTrainer, TheShareOfTimeSpentExchangingGradientsIsLoggedInAJobOnly) {
  TwoRanks ranks;
  TrainerRig alone{8, 6, "{type: sgd, lr: 0.1}", 2, torch::kCPU, 1};
  TrainOptions options = test_rig::train_options("4 steps", "4 steps", "2 steps");
  ranks.fit(options);
  alone.fit(options);
  ASSERT_EQ(ranks.errors[0], "");
  EXPECT_THAT(ranks.rank0.steps_logged("train/time/communication"), ElementsAre(2, 4));
  for (double share : ranks.rank1.values_logged("train/time/communication"))
    EXPECT_TRUE(share >= 0 && share <= 1) << share;
  EXPECT_THAT(alone.steps_logged("train/time/communication"), IsEmpty());
  EXPECT_THAT(alone.steps_logged("train/time/optimizer"), ElementsAre(2, 4));
}

TEST(DistributedTrainer, ANanOnOneRankSkipsThatStepOnBoth) {
  TwoRanks ranks;
  ranks.rank0.loss = std::make_unique<PoisonedLoss>(3, /*once=*/true);  // step 3, rank 0 only
  TrainOptions options = test_rig::train_options("4 steps", "4 steps", "1 step");
  options.on_nan = OnNan::kSkipStep;
  ranks.fit(options);
  ASSERT_EQ(ranks.errors[0], "");
  ASSERT_EQ(ranks.errors[1], "");
  std::vector<int64_t> skipped = ranks.rank0.steps_logged("train/skipped_steps");
  EXPECT_THAT(skipped, Not(IsEmpty()));
  EXPECT_EQ(ranks.rank1.steps_logged("train/skipped_steps"), skipped);
  EXPECT_EQ(skipped.front(), 3);
  EXPECT_TRUE(same_weights(*ranks.rank0.model, *ranks.rank1.model));
  // Rank 1 skips because rank 0's loss was not finite, before it looks at the mean gradient.
  EXPECT_THAT(read_text_file(ranks.rank1.dir.file("console.txt")),
              HasSubstr("another process's training loss was not finite at step 3; skipped that "
                        "step"));
}

TEST(DistributedTrainer, ANanOnOneRankStopsBoth) {
  TwoRanks ranks;
  ranks.rank1.loss = std::make_unique<PoisonedLoss>(2, /*once=*/true);  // step 2, rank 1 only
  ranks.fit(test_rig::train_options("4 steps", "4 steps", "1 step"));   // on_nan: stop
  EXPECT_THAT(ranks.errors[1], HasSubstr("training loss became nan at step 2"));
  EXPECT_THAT(ranks.errors[0],
              HasSubstr("another process's training loss was not finite at step 2"));
}

TEST(DistributedTrainer, AStopSignalOnOneRankStopsBothAtTheSameStep) {
  TwoRanks ranks;
  std::atomic<int> signal{15};
  ranks.rank1.stop_signal = &signal;  // rank 1 alone was sent SIGTERM
  ranks.fit(test_rig::train_options("4 steps", "4 steps", "1 step"));
  ASSERT_EQ(ranks.errors[0], "");
  ASSERT_EQ(ranks.errors[1], "");
  EXPECT_EQ(ranks.results[0].stopped_by_signal, 15);
  EXPECT_EQ(ranks.results[1].stopped_by_signal, 15);
  EXPECT_EQ(ranks.results[0].progress.steps, ranks.results[1].progress.steps);
  EXPECT_LT(ranks.results[0].progress.steps, 4);
}

}  // namespace distributed_trainer_test
}  // namespace kiln::engine
