// Convolutions run on oneDNN with reordered weights: the rewritten model computes what the model
// computed in eval mode, whether a run of layers in oneDNN's layout ends inside the stack, at its
// end or at a layer that needs ordinary tensors, and with its batch norms folded first.

#include "kiln/models/onednn_convolutions.h"

#include <gtest/gtest.h>

#include "kiln/models/fold_batch_norms.h"
#include "tests/support/models.h"

namespace kiln::models {
namespace onednn_convolutions_test {

std::shared_ptr<Model> trained(const std::string& layers) {
  torch::manual_seed(5);
  auto model = testing::build_sequential("layers: " + layers, {2, 8, 8});
  model->train();
  torch::NoGradGuard no_grad;
  for (int i = 0; i < 3; ++i) model->forward(torch::randn({8, 2, 8, 8}) + 0.5);
  model->eval();
  return model;
}

void expect_same_after_rewriting(const std::string& layers, int expected_convolutions) {
  if (!at::hasMKLDNN()) GTEST_SKIP() << "this LibTorch has no oneDNN";
  auto model = trained(layers);
  torch::NoGradGuard no_grad;
  torch::Tensor input = torch::randn({3, 2, 8, 8});
  torch::Tensor before = model->forward(input);
  fold_batch_norms(*model);
  EXPECT_EQ(run_convolutions_on_onednn(*model), expected_convolutions);
  torch::Tensor after = model->forward(input);
  EXPECT_FALSE(after.is_mkldnn());
  ASSERT_EQ(after.sizes(), before.sizes());
  EXPECT_TRUE(torch::allclose(before, after, 1e-4, 1e-4)) << (before - after).abs().max();
  // A batch of one and a larger batch after the first: the reordered weights take any batch.
  EXPECT_TRUE(
      torch::allclose(model->forward(input.narrow(0, 0, 1)), before.narrow(0, 0, 1), 1e-4, 1e-4));
}

TEST(OneDnnConvolutions, ARunEndingAtAFlattenComputesTheSame) {
  expect_same_after_rewriting(
      "[{type: conv2d, out: 4}, batchnorm, relu, {type: maxpool, kernel: 2}, "
      "{type: conv2d, out: 6, stride: 2, padding: 1}, batchnorm, relu, flatten, {type: linear, "
      "out: 3}]",
      2);
}

TEST(OneDnnConvolutions, ARunEndingTheStackGivesOrdinaryTensors) {
  expect_same_after_rewriting("[{type: conv2d, out: 4, bias: false}, relu]", 1);
}

TEST(OneDnnConvolutions, ALayerOfAnotherKindEndsTheRunAndAnotherBegins) {
  expect_same_after_rewriting(
      "[{type: conv2d, out: 4}, {type: dropout, p: 0.5}, {type: conv2d, out: 3, kernel: 1}, "
      "sigmoid, {type: conv2d, out: 2, kernel: 5, padding: valid}, flatten]",
      3);
}

}  // namespace onednn_convolutions_test
}  // namespace kiln::models
