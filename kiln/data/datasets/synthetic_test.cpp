#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/data/dataset.h"
#include "tests/support/components.h"

namespace kiln::data {
namespace synthetic_test {

using ::testing::ElementsAre;

std::shared_ptr<Dataset> synthetic(const std::string& options) {
  return make_dataset("{type: synthetic, " + options + "}");
}

Batch everything(const Dataset& dataset) { return dataset.gather(torch::arange(dataset.size())); }

TEST(Synthetic, TheSameSeedGivesTheSameDataAndAnotherSeedOtherData) {
  for (const char* task : {"blobs", "curve", "signal"}) {
    std::string options = std::string("task: ") + task + ", size: 50";
    Batch a = everything(*synthetic(options + ", seed: 4"));
    Batch b = everything(*synthetic(options + ", seed: 4"));
    Batch c = everything(*synthetic(options + ", seed: 5"));
    EXPECT_TRUE(torch::equal(a.input, b.input)) << task;
    EXPECT_TRUE(torch::equal(a.target, b.target)) << task;
    EXPECT_FALSE(torch::equal(a.input, c.input)) << task;
  }
}

TEST(Synthetic, BlobsAreLabelledPointsAroundSeparateCentres) {
  auto dataset = synthetic("task: blobs, size: 600, classes: 4, features: 3, spread: 10");
  EXPECT_EQ(dataset->size(), 600);
  EXPECT_THAT(dataset->input_shape(), ElementsAre(3));
  Batch all = everything(*dataset);
  EXPECT_EQ(all.target.dtype(), torch::kInt64);
  EXPECT_EQ(all.target.min().item<int64_t>(), 0);
  EXPECT_EQ(all.target.max().item<int64_t>(), 3);
  // Points of one class sit within a few unit deviations of their mean.
  torch::Tensor first = all.input.index({all.target == 0});
  EXPECT_LT((first - first.mean(0)).norm(2, 1).max().item<double>(), 6.0);
}

TEST(Synthetic, ACurveWithoutNoiseIsTheFunction) {
  Batch all = everything(*synthetic("task: curve, size: 100, noise: 0, function: sin"));
  EXPECT_THAT(all.input.sizes().vec(), ElementsAre(100, 1));
  EXPECT_TRUE(torch::allclose(all.target, torch::sin(all.input)));
  EXPECT_LE(all.input.abs().max().item<double>(), 3.0);
  Batch square = everything(*synthetic("task: curve, size: 10, noise: 0, function: square"));
  EXPECT_TRUE(torch::allclose(square.target, square.input * square.input));
}

TEST(Synthetic, SignalsAreNoisyInputsWithCleanTargets) {
  auto dataset = synthetic("task: signal, size: 8, length: 32, noise: 0.5");
  EXPECT_THAT(dataset->input_shape(), ElementsAre(1, 32));
  Batch all = everything(*dataset);
  EXPECT_THAT(all.target.sizes().vec(), ElementsAre(8, 1, 32));
  double noise = (all.input - all.target).std().item<double>();
  EXPECT_NEAR(noise, 0.5, 0.1);
  Batch clean = everything(*synthetic("task: signal, size: 8, length: 32, noise: 0"));
  EXPECT_TRUE(torch::equal(clean.input, clean.target));
}

TEST(Synthetic, FrequencySignalsHoldExactlyTheFrequenciesTheirTargetsMark) {
  auto dataset = synthetic("task: frequencies, size: 40, classes: 5, length: 32, noise: 0");
  EXPECT_THAT(dataset->input_shape(), ElementsAre(1, 32));
  Batch all = everything(*dataset);
  EXPECT_THAT(all.target.sizes().vec(), ElementsAre(40, 5));
  EXPECT_EQ(all.target.dtype(), torch::kFloat32);
  double share = all.target.mean().item<double>();
  EXPECT_GT(share, 0.3) << "each frequency present about half the time";
  EXPECT_LT(share, 0.7);
  // Whole cycles leak into no other bin: bin k holds amplitude x length / 2 >= 8 when present.
  torch::Tensor spectrum = torch::fft::rfft(all.input.squeeze(1)).abs().slice(1, 1, 6);
  EXPECT_TRUE(torch::equal(spectrum > 4.0, all.target > 0.5));
  EXPECT_THROW(synthetic("task: frequencies, classes: 8, length: 16"), Error)
      << "16 samples cannot hold 8 cycles";
}

TEST(Synthetic, RejectsUnknownTasksAndSizes) {
  EXPECT_THROW(synthetic("task: spiral"), ConfigError);
  EXPECT_THROW(synthetic("size: 0"), ConfigError);
  EXPECT_THROW(synthetic("classes: 1"), ConfigError);
}

}  // namespace synthetic_test
}  // namespace kiln::data
