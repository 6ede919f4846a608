#include "kiln/engine/device_feed.h"

#include <gtest/gtest.h>

namespace kiln::engine {
namespace {

data::Batch image_batch() {
  data::Batch batch;
  batch.input = torch::arange(2 * 3 * 4 * 5, torch::kFloat32).reshape({2, 3, 4, 5});
  batch.target = torch::tensor({1, 0}, torch::kInt64);
  return batch;
}

TEST(DeviceFeed, LeavesCpuBatchesAsTheyAreMade) { EXPECT_FALSE(device_feed(torch::kCPU, {})); }

TEST(DeviceFeed, StoresCpuImagesChannelsLastWithTheSameValues) {
  auto feed = device_feed(torch::kCPU, {/*pin_memory=*/true, /*channels_last=*/true});
  ASSERT_TRUE(feed);
  data::Batch made = image_batch();
  data::Batch fed = feed(image_batch());
  EXPECT_TRUE(fed.input.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(fed.input.is_contiguous());
  EXPECT_TRUE(torch::equal(fed.input, made.input));
  EXPECT_TRUE(torch::equal(fed.target, made.target));
}

TEST(DeviceFeed, MakesConvolutionKernelsChannelsLastAndLeavesOtherWeights) {
  torch::nn::Sequential model(torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 8, 3)),
                              torch::nn::Flatten(), torch::nn::Linear(8, 2));
  torch::Tensor before = model[0]->as<torch::nn::Conv2d>()->weight.detach().clone();
  make_channels_last(*model);
  torch::Tensor kernel = model[0]->as<torch::nn::Conv2d>()->weight;
  EXPECT_TRUE(kernel.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_FALSE(kernel.is_contiguous());
  EXPECT_TRUE(kernel.requires_grad());
  EXPECT_TRUE(torch::equal(kernel, before));
  EXPECT_TRUE(model[2]->as<torch::nn::Linear>()->weight.is_contiguous());
}

// On CUDA the copy runs on a side stream; once the batch has arrived, the default stream sees
// the values the host made.
TEST(DeviceFeed, CopiesBatchesToCudaThatArriveWithTheirValues) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "needs CUDA; this machine has none";
  for (bool pinned : {true, false}) {
    auto feed = device_feed(torch::Device(torch::kCUDA), {pinned, /*channels_last=*/true});
    ASSERT_TRUE(feed);
    data::Batch fed = feed(image_batch());
    ASSERT_TRUE(fed.arrive);
    fed.arrive();
    EXPECT_TRUE(fed.input.is_cuda());
    EXPECT_TRUE(fed.target.is_cuda());
    EXPECT_TRUE(fed.input.is_contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(torch::equal(fed.input.cpu(), image_batch().input)) << "pinned " << pinned;
    EXPECT_TRUE(torch::equal(fed.target.cpu(), image_batch().target)) << "pinned " << pinned;
  }
}

}  // namespace
}  // namespace kiln::engine
