// PR curves: the six rows worked out by hand from bucket counts, and the event as TensorBoard's
// pr_curves plugin reads it, decoded by the tests' own decoder.

#include "kiln/tensorboard/pr_curve.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/tensorboard/proto/event.pb.h"
#include "tests/support/event_file_reader.h"

namespace kiln::tensorboard {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;

// Thresholds 0, 0.5 and 1: positives scored into buckets 0, 1, 2 as 1, 2, 1; negatives 3, 1, 0.
const PrCurveCounts kCounts{{1, 2, 1}, {3, 1, 0}};

TEST(PrCurve, RowsAreCountsAtOrAboveEachThresholdAndTheirRatios) {
  std::array<std::vector<double>, 6> rows = pr_curve_rows(kCounts);
  EXPECT_THAT(rows[0], ElementsAre(4, 3, 1)) << "true positives";
  EXPECT_THAT(rows[1], ElementsAre(4, 1, 0)) << "false positives";
  EXPECT_THAT(rows[2], ElementsAre(0, 3, 4)) << "true negatives";
  EXPECT_THAT(rows[3], ElementsAre(0, 1, 3)) << "false negatives";
  EXPECT_THAT(rows[4], ElementsAre(DoubleEq(0.5), DoubleEq(0.75), DoubleEq(1))) << "precision";
  EXPECT_THAT(rows[5], ElementsAre(DoubleEq(1), DoubleEq(0.75), DoubleEq(0.25))) << "recall";
}

TEST(PrCurve, AThresholdNoExampleReachesHasPrecisionAndRecallZero) {
  std::array<std::vector<double>, 6> rows = pr_curve_rows({{2, 0}, {1, 0}});
  EXPECT_EQ(rows[4][1], 0);
  EXPECT_EQ(rows[5][1], 0);
}

TEST(PrCurve, TheEventIsAFloatTensorOfSixRowsWithThePluginsMetadata) {
  testing::DecodedEvent event =
      testing::decode_event(pr_curve_event("pr_curve/cat", 7, 12.5, kCounts).SerializeAsString());
  EXPECT_EQ(event.step, 7);
  ASSERT_EQ(event.values.size(), 1u);
  const testing::DecodedValue& value = event.values[0];
  EXPECT_EQ(value.tag, "pr_curve/cat");
  EXPECT_EQ(value.plugin, "pr_curves");
  testing::DecodedPrCurvePlugin plugin = testing::decode_pr_curve_plugin(value.plugin_content);
  EXPECT_EQ(plugin.version, 0);
  EXPECT_EQ(plugin.num_thresholds, 3);
  ASSERT_TRUE(value.tensor.has_value());
  EXPECT_THAT(value.tensor->shape, ElementsAre(6, 3));
  EXPECT_THAT(testing::tensor_floats(*value.tensor),
              ElementsAre(4, 3, 1, 4, 1, 0, 0, 3, 4, 0, 1, 3, 0.5f, 0.75f, 1, 1, 0.75f, 0.25f));
}

}  // namespace
}  // namespace kiln::tensorboard
