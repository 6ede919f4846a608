// A gap in every column type: numbers filled with the training split's median or mode (per
// element), a bucketize column's mode or a bucket of its own, a categorical column's index of its
// own; each kept in preprocessing.json, and crossed as a value of its own.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_columns.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace missing_values_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using Rows = kiln::testing::TabularRows;
using kiln::testing::fitted_columns;
using kiln::testing::row_written;

// Pairs (x0, x1): x0 of 1, 2, 2, 9 (median 2, mode 2); x1 of 4, 4, 5, 7 (median 4.5, mode 4).
Rows pairs() {
  return Rows({{{"x", io::float_feature({1, 4})}},
               {{"x", io::float_feature({2, 5})}},
               {{"x", io::float_feature({9, 4})}},
               {{"x", io::float_feature({2, 7})}},
               {}});
}

TEST(NumericColumn, AGapTakesTheTrainingMedianOrModeOfEachElement) {
  auto with = [](const char* missing) {
    return fitted_columns({{"x", {{"type", "numeric"}, {"shape", 2}, {"missing", missing}}}}, {"x"},
                          pairs());
  };
  FeatureColumns median = with("median"), mode = with("mode"), mean = with("mean");
  EXPECT_THAT(row_written(median, {}), ElementsAre(2, 4.5));
  EXPECT_THAT(row_written(mode, {}), ElementsAre(2, 4));
  EXPECT_THAT(row_written(mean, {}), ElementsAre(3.5, 5));
  EXPECT_EQ(median.preprocessing()["columns"][0]["fitted"]["fill"], Json({2.0, 4.5}));
  auto again = FeatureColumns::from_preprocessing(mode.preprocessing());
  EXPECT_THAT(row_written(*again, {}), ElementsAre(2, 4));
  // A present value is as it was.
  EXPECT_THAT(row_written(median, {{"x", io::float_feature({8, 8})}}), ElementsAre(8, 8));
}

TEST(BucketizeColumn, AGapTakesTheModeOrABucketOfItsOwn) {
  Rows rows({{{"x", io::float_feature({1})}},
             {{"x", io::float_feature({6})}},
             {{"x", io::float_feature({6})}},
             {}});
  auto with = [&](const char* missing, const char* output = "one_hot") {
    return fitted_columns({{"x",
                            {{"type", "bucketize"},
                             {"boundaries", {3, 5}},
                             {"missing", missing},
                             {"output", output}}}},
                          {"x"}, rows);
  };
  EXPECT_THAT(row_written(with("mode"), {}), ElementsAre(0, 0, 1));  // 6, above 5
  FeatureColumns own = with("bucket");
  EXPECT_EQ(own.width(), 4);  // three buckets and the gap's
  EXPECT_THAT(row_written(own, {}), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(row_written(own, {{"x", io::float_feature({4})}}), ElementsAre(0, 1, 0, 0));
  EXPECT_THAT(row_written(with("bucket", "index"), {}), ElementsAre(3));
  auto again = FeatureColumns::from_preprocessing(own.preprocessing());
  EXPECT_THAT(row_written(*again, {}), ElementsAre(0, 0, 0, 1));
}

TEST(CategoricalColumn, AGapTakesAnIndexOfItsOwn) {
  Rows rows({{{"c", io::bytes_feature({"a"})}}, {{"c", io::bytes_feature({"b"})}}, {}});
  auto with = [&](const char* output) {
    return fitted_columns(
        {{"c", {{"type", "categorical"}, {"missing", "bucket"}, {"output", output}}}}, {"c"}, rows);
  };
  // The vocabulary [a, b], one OOV bucket, then the gap's.
  FeatureColumns one_hot = with("one_hot");
  EXPECT_EQ(one_hot.width(), 4);
  EXPECT_THAT(row_written(one_hot, {}), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(row_written(one_hot, {{"c", io::bytes_feature({"b"})}}), ElementsAre(0, 1, 0, 0));
  FeatureColumns index = with("index");
  EXPECT_THAT(row_written(index, {}), ElementsAre(3));
  ASSERT_EQ(index.layout().indices.size(), 1u);
  EXPECT_EQ(index.layout().indices[0].cardinality, 4);
  auto again = FeatureColumns::from_preprocessing(index.preprocessing());
  EXPECT_THAT(row_written(*again, {}), ElementsAre(3));
}

TEST(CrossedColumn, CrossesAGapWithABucketOfItsOwnAsAValue) {
  Rows rows({{{"c", io::bytes_feature({"a"})}, {"x", io::float_feature({1})}}, {}});
  Json specs = {
      {"c", {{"type", "categorical"}, {"missing", "bucket"}}},
      {"b", {{"type", "bucketize"}, {"feature", "x"}, {"boundaries", {0}}, {"missing", "bucket"}}},
      {"cb",
       {{"type", "crossed"}, {"features", {"c", "b"}}, {"hash_buckets", 64}, {"output", "index"}}}};
  FeatureColumns c = fitted_columns(specs, {"c", "b", "cb"}, rows);
  std::vector<float> row = row_written(c, {});
  EXPECT_EQ(row.back(), float(stable_hash("<missing>_X_2") % 64)) << "the gap's bucket is 2";
  EXPECT_THAT(
      [] {
        fitted_columns({{"x", {{"type", "numeric"}, {"missing", "bucket"}}}}, {"x"}, pairs());
      },
      ThrowsMessage<ConfigError>(HasSubstr("data.columns.x.missing")));
}

}  // namespace missing_values_test
}  // namespace kiln::tabular
