// Derived features over a CSV file's rows: columns of their own (or in place of one of the same
// name), their values in text that reads back the same, a missing one an empty cell.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/data/csv_derived.h"

namespace kiln::data {
namespace csv_derived_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

io::CsvTable trips() {
  return io::parse_csv(
      "fare,tips,payment_type\n"
      "10,2.5,Credit Card\n"
      ",1,Cash\n"
      "0.1,0,Cash\n",
      "trips.csv");
}

tabular::DerivedFeatures taxi() {
  return tabular::DerivedFeatures({{"tips", "tips * 10"},  // in place of the raw column
                                   {"big_tipper", "where(is_missing(fare), 0, tips > 2 * fare)"},
                                   {"log_fare", "log1p(fare)"},
                                   {"paid_by", "where(payment_type == 'Cash', 'cash', 'card')"}},
                                  "data.derived");
}

TEST(CsvDerived, EachDerivedFeatureIsAColumnOfText) {
  io::CsvTable table = trips();
  add_derived_columns(table, taxi());
  EXPECT_THAT(table.header,
              ElementsAre("fare", "tips", "payment_type", "big_tipper", "log_fare", "paid_by"));
  EXPECT_THAT(table.rows[0], ElementsAre("10", "25", "Credit Card", "1",
                                         fmt::format("{}", float(std::log1p(10.0))), "card"));
  // No fare: the label is 0, log_fare is missing (an empty cell).
  EXPECT_THAT(table.rows[1], ElementsAre("", "10", "Cash", "0", "", "cash"));
  // A fraction reads back as the same float.
  double read_back = 0;
  ASSERT_TRUE(io::parse_double(table.rows[2][4], read_back));
  EXPECT_EQ(float(read_back), float(std::log1p(double(0.1f))));
}

TEST(CsvDerived, NothingDerivedLeavesTheTableAsItWas) {
  io::CsvTable table = trips();
  add_derived_columns(table, {});
  EXPECT_EQ(table.header.size(), 3u);
  EXPECT_EQ(table.rows[1][0], "");
}

TEST(CsvDerived, TextWhereANumberMustStandNamesTheRow) {
  io::CsvTable table = trips();
  try {
    add_derived_columns(table, tabular::DerivedFeatures({{"x", "payment_type * 2"}}, "d"));
    FAIL() << "text doubled";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), "trips.csv");
    EXPECT_EQ(e.record(), 0);
    EXPECT_THAT(e.what(), HasSubstr("* needs a number, and got the text \"Credit Card\""));
  }
}

}  // namespace csv_derived_test
}  // namespace kiln::data
