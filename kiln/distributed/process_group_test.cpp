// Two ranks of a real c10d job (a TCPStore and Gloo over loopback TCP), as two threads of this
// process: what each collective gives, and the messages when a rank never comes or goes away.

#include "kiln/distributed/process_group.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "kiln/core/error.h"
#include "kiln/distributed/launcher.h"

namespace kiln::distributed {
namespace process_group_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Rendezvous rank_of_two(int rank, int port) {
  Rendezvous job;
  job.rank = rank;
  job.world_size = 2;
  job.master_port = port;
  job.source = "test";
  return job;
}

// Runs `body(context)` on both ranks at once; each rank's result, by rank.
template <typename Result>
std::vector<Result> on_two_ranks(const std::function<Result(Context&)>& body,
                                 ProcessGroupOptions options = {std::chrono::seconds(20), 25 << 20,
                                                                "lo", 1 << 20, true}) {
  int port = free_port();
  auto run = [&](int rank) {
    std::shared_ptr<Context> context = join_process_group(rank_of_two(rank, port), options);
    return body(*context);
  };
  auto other = std::async(std::launch::async, run, 1);
  Result first = run(0);
  return {first, other.get()};
}

TEST(ProcessGroup, AveragesGradientsInBucketsOfMixedDtypesAfterBackward) {
  // overlap: false; no backward is watched, so every bucket starts in reduce_gradients.
  ProcessGroupOptions small_buckets{std::chrono::seconds(20), 16, "lo", 16, false};
  auto results = on_two_ranks<std::vector<torch::Tensor>>(
      [](Context& context) {
        double r = context.rank();
        std::vector<torch::Tensor> parameters = {
            torch::zeros({2, 3}), torch::zeros({5}), torch::zeros({1}, torch::kFloat64),
            torch::zeros({4}),    torch::zeros({2}), torch::zeros({3})};
        std::vector<torch::Tensor> gradients = {
            torch::full({2, 3}, 1 + r), torch::full({5}, 10 * (1 + r)),
            torch::full({1}, 3 * (1 + r), torch::kFloat64), torch::arange(4).to(torch::kFloat) * r,
            torch::full({2}, 4.0)};
        for (size_t k = 0; k < parameters.size(); ++k) {
          parameters[k].requires_grad_();
          // The fifth has a gradient on rank 1 only; the sixth on no rank.
          if (k < 4 || (k == 4 && r == 1)) parameters[k].mutable_grad() = gradients[k];
        }
        bool flagged = context.reduce_gradients(parameters, /*flag=*/r == 1);
        std::vector<torch::Tensor> reduced;
        for (const torch::Tensor& p : parameters) reduced.push_back(p.grad());
        reduced.push_back(torch::tensor(flagged));
        return reduced;
      },
      small_buckets);
  for (const std::vector<torch::Tensor>& gradients : results) {
    EXPECT_TRUE(torch::allclose(gradients[0], torch::full({2, 3}, 1.5)));
    EXPECT_TRUE(torch::allclose(gradients[1], torch::full({5}, 15.0)));
    EXPECT_EQ(gradients[2].scalar_type(), torch::kFloat64);
    EXPECT_DOUBLE_EQ(gradients[2].item<double>(), 4.5);
    EXPECT_TRUE(torch::allclose(gradients[3], torch::arange(4).to(torch::kFloat) * 0.5));
    ASSERT_TRUE(gradients[4].defined()) << "a gradient another rank had";
    EXPECT_TRUE(torch::equal(gradients[4], torch::full({2}, 2.0)));
    EXPECT_FALSE(gradients[5].defined()) << "no rank had it: no gradient, as on one process";
    EXPECT_TRUE(gradients[6].item<bool>()) << "rank 1's flag, on both ranks";
  }
}

TEST(ProcessGroup, AveragesGradientsAsBackwardProducesThem) {
  ProcessGroupOptions small_buckets{std::chrono::seconds(20), 16, "lo", 16, true};
  auto results = on_two_ranks<std::vector<torch::Tensor>>(
      [](Context& context) {
        double r = context.rank();
        torch::Tensor a = torch::full({3}, 1.0).requires_grad_(),
                      b = torch::full({4}, 2.0).requires_grad_();
        std::vector<torch::Tensor> parameters = {a, b};
        context.prepare_gradient_reduction(parameters);
        ((a.sum() * b).sum() * (1 + r)).backward();  // rank r: a's grad 8 (1 + r), b's 3 (1 + r)
        bool flagged = context.reduce_gradients(parameters, /*flag=*/false);
        return std::vector<torch::Tensor>{a.grad(), b.grad(), torch::tensor(flagged)};
      },
      small_buckets);
  for (const std::vector<torch::Tensor>& gradients : results) {
    EXPECT_TRUE(torch::equal(gradients[0], torch::full({3}, 12.0)));
    EXPECT_TRUE(torch::equal(gradients[1], torch::full({4}, 4.5)));
    EXPECT_FALSE(gradients[2].item<bool>());
  }
}

TEST(ProcessGroup, ReducesGathersAndBroadcastsAsTheRanksBringThem) {
  struct Seen {
    std::vector<double> sum, max, min;
    std::vector<std::vector<double>> gathered;
    std::string text;
    torch::Tensor weights;
  };
  auto results = on_two_ranks<Seen>([](Context& context) {
    Seen seen;
    double r = context.rank();
    seen.sum = {1 + r, -r};
    context.all_reduce(seen.sum, ReduceOp::kSum);
    seen.max = {r, -r};
    context.all_reduce(seen.max, ReduceOp::kMax);
    seen.min = {r, -r};
    context.all_reduce(seen.min, ReduceOp::kMin);
    // Rank 0 brings nothing, rank 1 three values: lengths may differ.
    seen.gathered =
        context.all_gather(r == 0 ? std::vector<double>{} : std::vector<double>{7, 8, 9});
    seen.text = context.broadcast(r == 0 ? "runs/cnn/2026-11-26" : "");
    std::vector<torch::Tensor> weights = {torch::full({3}, r + 1)};
    context.broadcast_tensors(weights);
    seen.weights = weights[0];
    return seen;
  });
  for (const Seen& seen : results) {
    EXPECT_THAT(seen.sum, ElementsAre(3, -1));
    EXPECT_THAT(seen.max, ElementsAre(1, 0));
    EXPECT_THAT(seen.min, ElementsAre(0, -1));
    ASSERT_EQ(seen.gathered.size(), 2u);
    EXPECT_TRUE(seen.gathered[0].empty());
    EXPECT_THAT(seen.gathered[1], ElementsAre(7, 8, 9));
    EXPECT_EQ(seen.text, "runs/cnn/2026-11-26");
    EXPECT_TRUE(torch::equal(seen.weights, torch::full({3}, 1.0)));
  }
}

TEST(ProcessGroup, ARankAloneAtTheRendezvousFailsNamingTheMaster) {
  int port = free_port();
  try {
    join_process_group(rank_of_two(1, port),
                       {std::chrono::seconds(1), 25 << 20, "lo", 1 << 20, true});
    FAIL() << "joined a job with no rank 0";

  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("rank 1 of 2 could not meet the other ranks at"),
                                HasSubstr(fmt::format("127.0.0.1:{} (test)", port)),
                                HasSubstr("within 1 s")));
  }
}

TEST(ProcessGroup, ACollectiveFailsWithAMessageWhenTheOtherRankHasGone) {
  int port = free_port();
  ProcessGroupOptions options{std::chrono::seconds(5), 25 << 20, "lo", 1 << 20, true};
  std::promise<void> gone;
  std::thread other([&] {
    std::shared_ptr<Context> context = join_process_group(rank_of_two(1, port), options);
    std::vector<double> values = {1};
    context->all_reduce(values, ReduceOp::kSum);
    context.reset();  // rank 1 leaves: its connections close
    gone.set_value();
  });
  std::shared_ptr<Context> context = join_process_group(rank_of_two(0, port), options);
  std::vector<double> values = {1};
  context->all_reduce(values, ReduceOp::kSum);
  gone.get_future().wait();
  other.join();
  try {
    context->all_reduce(values, ReduceOp::kSum);
    FAIL() << "an all-reduce with a rank gone succeeded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("rank 0 of 2: an all-reduce failed"),
                                HasSubstr("another rank has stopped")));
  }
}

}  // namespace process_group_test
}  // namespace kiln::distributed
