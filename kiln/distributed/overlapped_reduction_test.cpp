// Gradient averaging during backward, with a fake all-reduce that stands for a second rank whose
// gradients are all 2: buckets in backward's order with a small first one, all-reduces started in
// bucket order while backward runs (the last, with the caller's flag, in finish()), a parameter
// without a gradient sent as zeros, and accumulation steps left alone.

#include "kiln/distributed/overlapped_reduction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

namespace kiln::distributed {
namespace overlapped_reduction_test {

using ::testing::ElementsAre;

struct Started {
  size_t bucket_elements;
  bool during_backward;
};

class Reduction : public ::testing::Test {
 protected:
  // Each parameter its own bucket unless told otherwise.
  void make(int64_t first_bucket_bytes = 4, int64_t bucket_bytes = 4) {
    reduction_ = std::make_unique<OverlappedReduction>(
        first_bucket_bytes, bucket_bytes,
        [this](torch::Tensor& flat) {
          started_.push_back({size_t(flat.numel()), in_backward_});
          // The other rank's gradients (and flags): 2 everywhere, or the same as this rank's.
          if (other_rank_same_)
            flat.mul_(2);
          else
            flat.add_(2);
          return c10::make_intrusive<c10d::Work>();
        },
        [this](const c10::intrusive_ptr<c10d::Work>& work) {
          EXPECT_TRUE(work);
          ++waited_;
        });
  }
  // loss = sum(((x * a) * b) * c): backward reaches c, then b, then a.
  void backward(bool armed) {
    if (armed) reduction_->arm(parameters_);
    torch::Tensor x = torch::ones({3});
    torch::Tensor loss = (x * a_ * b_ * c_).sum();
    in_backward_ = true;
    loss.backward();
    in_backward_ = false;
  }

  torch::Tensor a_ = torch::full({3}, 1.0).requires_grad_();
  torch::Tensor b_ = torch::full({3}, 2.0).requires_grad_();
  torch::Tensor c_ = torch::full({3}, 3.0).requires_grad_();
  torch::Tensor unused_ = torch::zeros({2}).requires_grad_();
  std::vector<torch::Tensor> parameters_ = {a_, b_, c_};
  std::unique_ptr<OverlappedReduction> reduction_;
  std::vector<Started> started_;
  bool in_backward_ = false;
  bool other_rank_same_ = false;
  int waited_ = 0;
};

TEST_F(Reduction, BucketsFollowBackwardsOrderWithASmallFirstOne) {
  // A bucket closes once it holds at least its size (as PyTorch's): c's 12 bytes leave room in
  // the first 16, b's fill it; a opens the next.
  make(16, 64);
  reduction_->arm(parameters_);
  EXPECT_THAT(reduction_->bucket_members(), ElementsAre(ElementsAre(2, 1), ElementsAre(0)));
}

TEST_F(Reduction, EachBucketButTheLastStartsDuringBackwardAndTheMeansComeBack) {
  make();
  backward(true);
  ASSERT_EQ(started_.size(), 2u);
  for (const Started& started : started_) EXPECT_TRUE(started.during_backward);
  reduction_->finish(2);
  ASSERT_EQ(started_.size(), 3u);
  EXPECT_FALSE(started_[2].during_backward);
  EXPECT_EQ(waited_, 3);
  // Gradients (b*c, a*c, a*b) = (6, 3, 2), averaged with the other rank's 2.
  EXPECT_TRUE(torch::equal(a_.grad(), torch::full({3}, 4.0)));
  EXPECT_TRUE(torch::equal(b_.grad(), torch::full({3}, 2.5)));
  EXPECT_TRUE(torch::equal(c_.grad(), torch::full({3}, 2.0)));
}

TEST_F(Reduction, AParameterWithoutAGradientHoldsBackTheBucketsAfterItAndIsSentAsZeros) {
  make();
  parameters_ = {a_, unused_, b_, c_};
  backward(true);
  // c and b's buckets come before the unused one and start; a's (the last) waits behind it.
  ASSERT_EQ(started_.size(), 2u);
  reduction_->finish(2);
  ASSERT_EQ(started_.size(), 4u);
  EXPECT_FALSE(started_[2].during_backward);
  EXPECT_EQ(started_[2].bucket_elements, 3u);  // the unused parameter's and its flag, in its place
  EXPECT_EQ(started_[3].bucket_elements, 5u);  // a's three, its flag and the caller's
  ASSERT_TRUE(unused_.grad().defined());
  EXPECT_TRUE(torch::equal(unused_.grad(), torch::full({2}, 1.0)));
  EXPECT_TRUE(torch::equal(a_.grad(), torch::full({3}, 4.0)));
}

TEST_F(Reduction, AParameterNoRankHasAGradientForKeepsNone) {
  make();
  other_rank_same_ = true;
  parameters_ = {a_, unused_, b_, c_};
  backward(true);
  reduction_->finish(2);
  EXPECT_FALSE(unused_.grad().defined()) << "an optimizer passes it by, as on one process";
  EXPECT_TRUE(torch::equal(a_.grad(), torch::full({3}, 6.0)));
}

TEST_F(Reduction, ArmedAfterBackwardItStartsEveryBucketInFinish) {
  make();
  backward(false);
  reduction_->arm(parameters_);
  EXPECT_TRUE(started_.empty());
  reduction_->finish(2);
  ASSERT_EQ(started_.size(), 3u);
  for (const Started& s : started_) EXPECT_FALSE(s.during_backward);
  EXPECT_TRUE(torch::equal(a_.grad(), torch::full({3}, 4.0)));  // (6 + 2) / 2
}

TEST_F(Reduction, AccumulationStepsAreNotReducedAndTheLastSendsTheirSum) {
  make();
  backward(false);
  EXPECT_TRUE(started_.empty());
  backward(true);
  ASSERT_EQ(started_.size(), 2u);
  reduction_->finish(2);
  EXPECT_TRUE(torch::equal(c_.grad(), torch::full({3}, 3.0)));  // (2 + 2 + 2) / 2
}

// The other rank here sends what this one does: its flag is this one's.
TEST_F(Reduction, TheCallersFlagComesBackSetWhenAnyRankSetIt) {
  make();
  other_rank_same_ = true;
  backward(true);
  EXPECT_FALSE(reduction_->finish(2, false));
  backward(true);
  EXPECT_TRUE(reduction_->finish(2, true));
  other_rank_same_ = false;  // the other rank's flag is 2: set
  backward(true);
  EXPECT_TRUE(reduction_->finish(2, false));
}

TEST_F(Reduction, ArmedAgainItReusesItsHooksAndFiresOncePerParameter) {
  make();
  for (int step = 0; step < 3; ++step) {
    a_.mutable_grad() = torch::Tensor();
    b_.mutable_grad() = torch::Tensor();
    c_.mutable_grad() = torch::Tensor();
    backward(true);
    reduction_->finish(2);
    EXPECT_EQ(started_.size(), size_t(3 * (step + 1)));
    EXPECT_TRUE(torch::equal(a_.grad(), torch::full({3}, 4.0)));
  }
}

}  // namespace overlapped_reduction_test
}  // namespace kiln::distributed
