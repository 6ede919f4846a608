// Synchronized batch norm with two threads standing for two ranks (their sum meets in the
// middle): each half of a batch normalized with the whole batch's statistics gives what one
// module gives the whole batch, forward and backward, and the same running statistics.

#include "kiln/models/sync_batch_norm.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace kiln::models {
namespace sync_batch_norm_test {

// The sum over two ranks that are threads: the first to come waits for the second.
class TwoThreadSum {
 public:
  torch::Tensor operator()(const torch::Tensor& mine) {
    std::unique_lock<std::mutex> lock(mutex_);
    int64_t round = round_;
    if (!first_.defined()) {
      first_ = mine.clone();
      summed_.wait(lock, [&] { return round_ != round; });
      return sum_.clone();
    }
    sum_ = first_ + mine;
    first_ = torch::Tensor();
    ++round_;
    summed_.notify_all();
    return sum_.clone();
  }

 private:
  std::mutex mutex_;
  std::condition_variable summed_;
  torch::Tensor first_, sum_;
  int64_t round_ = 0;
};

struct Pass {
  torch::Tensor output, input_grad, weight_grad, bias_grad, running_mean, running_var;
};

// Forward and backward of `module` on `input`, the loss weighting each output by `weights`.
Pass run(BatchNorm2d& module, const torch::Tensor& input, const torch::Tensor& weights) {
  torch::Tensor x = input.clone().requires_grad_();
  torch::Tensor y = module->forward(x);
  (y * weights).sum().backward();
  return {y.detach(),
          x.grad(),
          module->weight.grad(),
          module->bias.grad(),
          module->running_mean.clone(),
          module->running_var.clone()};
}

BatchNorm2d made() {
  torch::manual_seed(3);
  BatchNorm2d module(torch::nn::BatchNorm2dOptions(3));
  torch::NoGradGuard no_grad;
  module->weight.uniform_(0.5, 1.5);
  module->bias.uniform_(-1, 1);
  return module;
}

TEST(SyncBatchNorm, TwoRanksOfHalfTheBatchComputeWhatOneModuleDoesOnTheWhole) {
  torch::manual_seed(1);
  torch::Tensor input = torch::randn({8, 3, 4, 5}) * 3 + 2;
  torch::Tensor weights = torch::randn({8, 3, 4, 5});
  BatchNorm2d whole_module = made();
  Pass whole = run(whole_module, input, weights);

  TwoThreadSum sum;
  BatchNorm2d ranks[2] = {made(), made()};
  for (auto& rank : ranks)
    EXPECT_EQ(synchronize_batch_norms(*rank, [&sum](const torch::Tensor& t) { return sum(t); }), 1);
  Pass halves[2];
  std::thread other(
      [&] { halves[1] = run(ranks[1], input.narrow(0, 4, 4), weights.narrow(0, 4, 4)); });
  halves[0] = run(ranks[0], input.narrow(0, 0, 4), weights.narrow(0, 0, 4));
  other.join();

  auto close = [](const torch::Tensor& a, const torch::Tensor& b) {
    return torch::allclose(a, b, /*rtol=*/1e-5, /*atol=*/1e-5);
  };
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(close(halves[r].output, whole.output.narrow(0, 4 * r, 4))) << r;
    EXPECT_TRUE(close(halves[r].input_grad, whole.input_grad.narrow(0, 4 * r, 4))) << r;
    EXPECT_TRUE(close(halves[r].running_mean, whole.running_mean)) << r;
    EXPECT_TRUE(close(halves[r].running_var, whole.running_var)) << r;
  }
  // The job's loss is the sum of the ranks': so are its parameters' gradients.
  EXPECT_TRUE(close(halves[0].weight_grad + halves[1].weight_grad, whole.weight_grad));
  EXPECT_TRUE(close(halves[0].bias_grad + halves[1].bias_grad, whole.bias_grad));
}

TEST(SyncBatchNorm, InEvaluationItIsTorchsBatchNorm) {
  BatchNorm2d synced = made(), plain = made();
  synchronize_batch_norms(*synced, [](const torch::Tensor&) -> torch::Tensor {
    ADD_FAILURE() << "no sum in evaluation";
    return {};
  });
  synced->eval();
  plain->eval();
  torch::Tensor input = torch::randn({2, 3, 4, 4});
  EXPECT_TRUE(torch::equal(synced->forward(input), plain->forward(input)));
}

}  // namespace sync_batch_norm_test
}  // namespace kiln::models
