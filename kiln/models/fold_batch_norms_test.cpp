// Folding batch norms into the convolutions before them: the folded model computes what the
// model computed in eval mode, with the batch norms no longer run, with and without conv biases.

#include "kiln/models/fold_batch_norms.h"

#include <gtest/gtest.h>

#include "tests/support/models.h"

namespace kiln::models {
namespace fold_batch_norms_test {

// Trained a few steps' worth in train mode, so that the running statistics are not 0 and 1.
std::shared_ptr<Model> trained(const std::string& layers) {
  torch::manual_seed(3);
  auto model = testing::build_sequential("layers: " + layers, {2, 6, 6});
  model->train();
  torch::NoGradGuard no_grad;
  for (int i = 0; i < 4; ++i) model->forward(torch::randn({8, 2, 6, 6}) * 2 + 0.5);
  model->eval();
  return model;
}

int batch_norms_run(Model& model) {
  int count = 0;
  for (const auto& module : model.modules())
    if (auto stack = std::dynamic_pointer_cast<torch::nn::SequentialImpl>(module))
      for (const auto& item : *stack)
        count += std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(item.ptr()) != nullptr;
  return count;
}

void expect_folded_equal(const std::string& layers, int expected_folds) {
  auto model = trained(layers);
  torch::NoGradGuard no_grad;
  torch::Tensor input = torch::randn({5, 2, 6, 6});
  torch::Tensor before = model->forward(input);
  EXPECT_EQ(fold_batch_norms(*model), expected_folds);
  EXPECT_EQ(batch_norms_run(*model), 0);
  torch::Tensor after = model->forward(input);
  EXPECT_TRUE(torch::allclose(before, after, 1e-5, 1e-5)) << (before - after).abs().max();
}

TEST(FoldBatchNorms, AFoldedModelComputesWhatTheModelDidInEvalMode) {
  expect_folded_equal(
      "[{type: conv2d, out: 4}, batchnorm, relu, {type: conv2d, out: 3, kernel: 1}, batchnorm, "
      "flatten, {type: linear, out: 2}]",
      2);
}

TEST(FoldBatchNorms, AConvolutionWithoutABiasGetsOne) {
  expect_folded_equal("[{type: conv2d, out: 4, bias: false}, batchnorm, relu, flatten]", 1);
}

TEST(FoldBatchNorms, ABatchNormAfterAnythingButAConvolutionStays) {
  auto model = trained("[relu, batchnorm, {type: conv2d, out: 3}, relu, batchnorm, flatten]");
  EXPECT_EQ(fold_batch_norms(*model), 0);
  EXPECT_EQ(batch_norms_run(*model), 2);
}

}  // namespace fold_batch_norms_test
}  // namespace kiln::models
