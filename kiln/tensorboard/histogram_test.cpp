#include "kiln/tensorboard/histogram.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "kiln/tensorboard/proto/summary.pb.h"

namespace kiln::tensorboard {
namespace {

proto::HistogramProto written(const Histogram& histogram) {
  proto::HistogramProto out;
  histogram.write_to(out);
  return out;
}

// TensorFlow's default edges: 1e-12 growing by 10 % while below 1e20 (774 of them), mirrored
// below 0, with 0 between and +-DBL_MAX at the ends.
TEST(Histogram, DefaultLimitsAreTensorFlows) {
  const std::vector<double>& limits = Histogram::default_limits();
  ASSERT_EQ(limits.size(), 2u * 774 + 3);
  EXPECT_EQ(limits.front(), -DBL_MAX);
  EXPECT_EQ(limits.back(), DBL_MAX);
  EXPECT_EQ(limits[775], 0.0);
  EXPECT_DOUBLE_EQ(limits[776], 1e-12);
  EXPECT_DOUBLE_EQ(limits[777], 1.1e-12);
  EXPECT_DOUBLE_EQ(limits[774], -1e-12);
  EXPECT_LT(limits[limits.size() - 2], 1e20);
  EXPECT_GT(limits[limits.size() - 2] * 1.1, 1e20);
  EXPECT_TRUE(std::is_sorted(limits.begin(), limits.end()));
}

TEST(Histogram, AValueOnALimitCountsInTheBucketThatEndsThere) {
  Histogram histogram;
  histogram.add(0.0);
  histogram.add(1e-12);
  proto::HistogramProto out = written(histogram);
  // Empty runs collapse: [-DBL_MAX..-1e-12] empty, (.., 0] holds 1, (0, 1e-12] holds 1, rest empty.
  ASSERT_EQ(out.bucket_size(), 4);
  EXPECT_EQ(out.bucket_limit(0), -1e-12);
  EXPECT_EQ(out.bucket(0), 0);
  EXPECT_EQ(out.bucket_limit(1), 0.0);
  EXPECT_EQ(out.bucket(1), 1);
  EXPECT_DOUBLE_EQ(out.bucket_limit(2), 1e-12);
  EXPECT_EQ(out.bucket(2), 1);
  EXPECT_EQ(out.bucket_limit(3), DBL_MAX);
  EXPECT_EQ(out.bucket(3), 0);
}

TEST(Histogram, StatisticsAndCountsAddUp) {
  Histogram histogram;
  const float values[] = {-2.5f, 0.5f, 0.5f, 3.0f};
  histogram.add(values, 4);
  proto::HistogramProto out = written(histogram);
  EXPECT_EQ(out.min(), -2.5);
  EXPECT_EQ(out.max(), 3.0);
  EXPECT_EQ(out.num(), 4);
  EXPECT_EQ(out.sum(), 1.5);
  EXPECT_EQ(out.sum_squares(), 6.25 + 0.25 + 0.25 + 9.0);
  double counted = 0;
  for (double count : out.bucket()) counted += count;
  EXPECT_EQ(counted, 4);
  // Each value lies in the bucket (previous limit, limit] that counts it.
  for (float value : values) {
    bool found = false;
    for (int i = 0; i < out.bucket_size(); ++i) {
      double left = i == 0 ? -DBL_MAX : out.bucket_limit(i - 1);
      if (value > left && value <= out.bucket_limit(i)) found = out.bucket(i) > 0;
    }
    EXPECT_TRUE(found) << value;
  }
}

TEST(Histogram, NanIsLeftOutAndInfinityGoesToTheOuterBuckets) {
  Histogram histogram;
  histogram.add(std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(histogram.count(), 0);
  histogram.add(std::numeric_limits<double>::infinity());
  histogram.add(-std::numeric_limits<double>::infinity());
  proto::HistogramProto out = written(histogram);
  EXPECT_EQ(out.num(), 2);
  EXPECT_EQ(out.bucket(0), 1);
  EXPECT_EQ(out.bucket_limit(0), -DBL_MAX);
  EXPECT_EQ(out.bucket(out.bucket_size() - 1), 1);
}

TEST(Histogram, AnEmptyHistogramIsOneEmptyBucketWithZeroStatistics) {
  proto::HistogramProto out = written(Histogram());
  EXPECT_EQ(out.num(), 0);
  EXPECT_EQ(out.min(), 0);
  EXPECT_EQ(out.max(), 0);
  ASSERT_EQ(out.bucket_size(), 1);
  EXPECT_EQ(out.bucket_limit(0), DBL_MAX);
}

}  // namespace
}  // namespace kiln::tensorboard
