// parallel_for: every item runs once, whatever the threads, and the first failure reaches the
// caller after every thread has stopped.

#include "kiln/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace kiln {
namespace {

TEST(ParallelFor, RunsEveryItemOnce) {
  std::vector<std::atomic<int>> runs(1000);
  parallel_for(runs.size(), [&](size_t i) { ++runs[i]; });
  for (const auto& count : runs) EXPECT_EQ(count.load(), 1);
  parallel_for(0, [](size_t) { FAIL() << "no item to run"; });
}

TEST(ParallelFor, TheFirstFailureIsRethrownAfterTheOthersRan) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_for(64,
                            [&](size_t i) {
                              ++ran;
                              if (i == 3) throw std::runtime_error("item 3");
                            }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 64);
}

}  // namespace
}  // namespace kiln
