#include "kiln/tabular/feature_statistics.h"

#include <gtest/gtest.h>

#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace {

using Rows = kiln::testing::TabularRows;

TEST(FeatureStatistics, CountsMissingNumbersAndTopValues) {
  Rows rows({{{"x", io::float_feature({1})}, {"c", io::bytes_feature({"b"})}},
             {{"x", io::float_feature({3})}, {"c", io::bytes_feature({"a"})}},
             {{"c", io::bytes_feature({"b"})}, {"n", io::int64_feature({4, 6})}}});
  Json stats = feature_table_json(describe_features(rows, 2), 1);
  EXPECT_EQ(stats["records"], 3);
  const Json& x = stats["features"]["x"];
  EXPECT_EQ(x["type"], "float_list");
  EXPECT_EQ(x["records"], 2);
  EXPECT_EQ(x["missing"], 1);
  EXPECT_EQ(x["min"], 1.0);
  EXPECT_EQ(x["max"], 3.0);
  EXPECT_EQ(x["mean"], 2.0);
  EXPECT_EQ(x["std"], 1.0);  // the population's, as the columns normalize by
  EXPECT_FALSE(x.contains("top"));
  const Json& c = stats["features"]["c"];
  EXPECT_EQ(c["distinct"], 2);
  EXPECT_EQ(c["top"], Json::parse(R"([{"value": "b", "count": 2}])"));
  EXPECT_EQ(stats["features"]["n"]["values"], 2);
  EXPECT_EQ(stats["features"]["n"]["mean"], 5.0);
}

TEST(FeatureStatistics, PartsMergeToTheSameTableWhateverTheThreads) {
  std::vector<io::Features> many;
  for (int i = 0; i < 50000; ++i)
    many.push_back(
        {{"x", io::float_feature({float(i % 101) / 7.0f})}, {"k", io::int64_feature({i % 17})}});
  Rows rows(many);
  EXPECT_EQ(feature_table_json(describe_features(rows, 1), 3),
            feature_table_json(describe_features(rows, 3), 3));
}

TEST(FeatureStatistics, AFeatureMissingFromEveryRecordIsListedAsMissing) {
  // A CSV column with only empty cells: every record holds the name, none a value. In the
  // second part of the pass "x" has values, and the empty first part must not make it "mixed".
  std::vector<io::Features> many;
  for (int i = 0; i < 20000; ++i)
    many.push_back({{"gone", io::Feature{}},
                    {"x", i < 17000 ? io::Feature{} : io::float_feature({float(i)})}});
  Json stats = feature_table_json(describe_features(Rows(many), 2), 3);
  const Json& gone = stats["features"]["gone"];
  EXPECT_EQ(gone["type"], "none");
  EXPECT_EQ(gone["records"], 0);
  EXPECT_EQ(gone["missing"], 20000);
  EXPECT_EQ(stats["features"]["x"]["type"], "float_list");
  EXPECT_EQ(stats["features"]["x"]["missing"], 17000);
}

}  // namespace
}  // namespace kiln::tabular
