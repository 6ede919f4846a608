// The limit on what building a model may allocate: tensors past it are refused before they are
// allocated, naming the file; within it, and on other threads, tensors are made as before.

#include "kiln/models/allocation_limit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

#include "kiln/core/error.h"

namespace kiln::models {
namespace {

using ::testing::HasSubstr;

TEST(AllocationLimit, ATensorPastTheLimitIsRefusedNamingTheFile) {
  AllocationLimit limit(size_t{1} << 20, "v/model.yaml", "building the model it describes");
  torch::Tensor small = torch::zeros({1000});  // 4,000 bytes
  EXPECT_GE(limit.used(), 4000u);
  try {
    torch::Tensor huge = torch::empty({int64_t{1} << 30});  // 4 GiB: never allocated
    FAIL() << "allocated " << huge.numel();
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "v/model.yaml");
    EXPECT_THAT(e.what(), HasSubstr("building the model it describes would take more than 1 MiB"));
  }
  EXPECT_LT(limit.used(), size_t{1} << 20);
}

TEST(AllocationLimit, OnlyTheThreadThatSetItAndOnlyWhileItLivesIsLimited) {
  {
    AllocationLimit limit(1024, "f", "building");
    std::thread other([] { EXPECT_EQ(torch::ones({1 << 20}).sum().item<float>(), 1 << 20); });
    other.join();
    EXPECT_THROW(torch::ones({1 << 20}), DataError);
  }
  EXPECT_EQ(torch::ones({1 << 20}).sum().item<float>(), 1 << 20);
}

TEST(AllocationLimit, AnInnerLimitAppliesUntilItEnds) {
  AllocationLimit outer(size_t{64} << 20, "outer", "building");
  {
    AllocationLimit inner(1024, "inner", "building");
    EXPECT_THROW(torch::zeros({4096}), DataError);
  }
  EXPECT_NO_THROW(torch::zeros({4096}));
}

TEST(AllocationLimit, TheAllowanceGrowsWithTheWeightsFile) {
  EXPECT_EQ(build_allowance("no/such/model.safetensors"), size_t{256} << 20);
}

}  // namespace
}  // namespace kiln::models
