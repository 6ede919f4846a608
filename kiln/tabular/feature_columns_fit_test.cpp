// The fitting pass of feature columns (feature_columns_fit.cpp): rows refused and left out of the
// statistics, and the same fit on any number of threads.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/tabular/feature_columns.h"
#include "tests/support/tabular_rows.h"

namespace kiln::tabular {
namespace feature_columns_fit_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Rows = kiln::testing::TabularRows;
using kiln::testing::declared_columns;
using kiln::testing::fitted_columns;

TEST(FeatureColumns, SkippingRefusedRowsLeavesThemOutOfTheStatistics) {
  // Row 1's x is a string, row 3 lacks y (missing: fail): without them the mean of x is 2.
  Rows rows({{{"x", io::float_feature({1})}, {"y", io::float_feature({0})}},
             {{"x", io::bytes_feature({"big"})}, {"y", io::float_feature({0})}},
             {{"x", io::float_feature({3})}, {"y", io::float_feature({0})}},
             {{"x", io::float_feature({100})}}});
  Json specs = {{"x", {{"type", "numeric"}, {"normalize", "zscore"}}},
                {"y", {{"type", "numeric"}, {"missing", "fail"}}}};
  EXPECT_THROW(fitted_columns(specs, {"x", "y"}, rows), DataError);
  FeatureColumns c(declared_columns(specs), {"x", "y"}, "input", "data.columns");
  c.fit(rows, 2, true);
  EXPECT_EQ(c.preprocessing()["columns"][0]["fitted"]["shift"], Json::array({2.0}));
  RefusedRows refused = c.refused(rows, 2);
  EXPECT_THAT(refused.rows, ElementsAre(1, 3));
  EXPECT_THAT(refused.first_problem, HasSubstr("feature \"x\" holds the string \"big\""));
  // Nothing left to fit on is an error saying why.
  Rows all_bad({{{"x", io::bytes_feature({"big"})}, {"y", io::float_feature({0})}}});
  FeatureColumns none(declared_columns(specs), {"x", "y"}, "input", "data.columns");
  EXPECT_THAT([&] { none.fit(all_bad, 1, true); },
              ::testing::ThrowsMessage<Error>(HasSubstr("refused every training record")));
}

TEST(FeatureColumns, ParallelFittingEqualsOneThread) {
  std::vector<io::Features> many;
  for (int i = 0; i < 40000; ++i)
    many.push_back({{"x", io::float_feature({float(i % 97) * 0.37f})},
                    {"c", io::bytes_feature({std::to_string(i % 13)})}});
  Rows rows(many);
  Json specs = {{"x", {{"type", "numeric"}, {"normalize", "zscore"}}},
                {"q", {{"type", "bucketize"}, {"feature", "x"}, {"quantiles", 5}}},
                {"c", "categorical"}};
  Json one = fitted_columns(specs, {"x", "q", "c"}, rows, 1).preprocessing();
  Json four = fitted_columns(specs, {"x", "q", "c"}, rows, 4).preprocessing();
  EXPECT_EQ(one, four);
}

}  // namespace feature_columns_fit_test
}  // namespace kiln::tabular
