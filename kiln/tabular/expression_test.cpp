// Derived features' expressions: precedence and kinds of values as Python's arithmetic gives
// them, missing values, functions, and mistakes named by the character where they are.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/error.h"
#include "kiln/tabular/expression.h"

namespace kiln::tabular {
namespace expression_test {

using ::testing::HasSubstr;

const io::RecordLocation kWhere{"taxi.tfrecord", 7, 1234};

// A taxi trip: float fare and tips, an int64 count, a text payment type, a list, an empty cell.
io::Features trip() {
  return {{"fare", io::float_feature({10.0f})},
          {"tips", io::float_feature({2.5f})},
          {"trip_seconds", io::int64_feature({600})},
          {"payment_type", io::bytes_feature({"Credit Card"})},
          {"pickup area", io::int64_feature({8})},
          {"two", io::float_feature({1, 2})},
          {"empty", io::Feature{}}};
}

Value eval(const std::string& text, const io::Features& features = trip()) {
  return Expression(text, "data.derived.x").evaluate(features, kWhere);
}

double number(const std::string& text) {
  Value value = eval(text);
  EXPECT_EQ(value.kind, Value::Kind::kNumber) << text;
  return value.number;
}

bool whole(const std::string& text) { return eval(text).whole; }

bool missing(const std::string& text) { return eval(text).kind == Value::Kind::kMissing; }

// The ConfigError's message for `text`.
std::string mistake(const std::string& text) {
  try {
    Expression(text, "data.derived.x");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "data.derived.x");
    return e.what();
  }
  ADD_FAILURE() << "parsed: " << text;
  return "";
}

TEST(Expression, ArithmeticHasPythonsPrecedence) {
  EXPECT_EQ(number("1 + 2 * 3"), 7);
  EXPECT_EQ(number("(1 + 2) * 3"), 9);
  EXPECT_EQ(number("2 ** 3 ** 2"), 512);  // right to left
  EXPECT_EQ(number("-2 ** 2"), -4);       // the power first
  EXPECT_EQ(number("2 ** -1"), 0.5);
  EXPECT_EQ(number("10 - 4 - 3"), 3);  // left to right
  EXPECT_EQ(number("7 % 3"), 1);
  EXPECT_EQ(number("-7 % 3"), 2);  // the sign of the divisor, as Python's
  EXPECT_EQ(number("7 % -3"), -2);
  EXPECT_EQ(number("7 / 2"), 3.5);
  EXPECT_EQ(number("1.5e1 + .5"), 15.5);
}

TEST(Expression, WholeNumbersStayWholeUntilDividedOrTransformed) {
  EXPECT_TRUE(whole("trip_seconds * 2 + 1"));
  EXPECT_TRUE(whole("tips > 0.2 * fare"));  // a comparison: 0 or 1
  EXPECT_TRUE(whole("where(fare > 5, 1, 0)"));
  EXPECT_TRUE(whole("abs(-3)"));
  EXPECT_FALSE(whole("trip_seconds / 60"));
  EXPECT_FALSE(whole("fare + 1"));  // a float feature
  EXPECT_FALSE(whole("sqrt(4)"));
  EXPECT_FALSE(whole("1.0"));
}

TEST(Expression, ReadsFeaturesOfEachKindAndComparesText) {
  EXPECT_EQ(number("tips > 0.2 * fare"), 1);
  EXPECT_EQ(number("tips > 0.3 * fare"), 0);
  EXPECT_EQ(number("trip_seconds / 60"), 10);
  EXPECT_EQ(number("payment_type == 'Credit Card'"), 1);
  EXPECT_EQ(number("payment_type != \"Cash\""), 1);
  EXPECT_EQ(number("`pickup area` + 1"), 9);  // a name with a space, in backquotes
  EXPECT_EQ(number("not (fare > 5) or tips >= 2.5 and fare <= 10"), 1);
  EXPECT_EQ(eval("where(fare > 5, payment_type, 'none')").text, "Credit Card");
}

TEST(Expression, AMissingFeatureMakesTheResultMissingUnlessAsked) {
  EXPECT_TRUE(missing("absent + 1"));
  EXPECT_TRUE(missing("empty * 2"));
  EXPECT_TRUE(missing("log1p(absent)"));
  EXPECT_TRUE(missing("absent > 1"));
  EXPECT_EQ(number("is_missing(absent)"), 1);
  EXPECT_EQ(number("is_missing(fare)"), 0);
  // The TFX taxi label: no fare, no big tip; the branch not taken is not computed.
  std::string label = "where(is_missing(fare), 0, tips > 0.2 * fare)";
  io::Features no_fare = trip();
  no_fare.erase("fare");
  EXPECT_EQ(eval(label, no_fare).number, 0);
  EXPECT_EQ(eval(label).number, 1);
  EXPECT_TRUE(missing("where(absent, 1, 2)"));
}

TEST(Expression, FunctionsAndResultsThatAreNoFiniteNumber) {
  EXPECT_DOUBLE_EQ(number("log1p(fare)"), std::log1p(10.0));
  EXPECT_DOUBLE_EQ(number("exp(1)"), std::exp(1.0));
  EXPECT_EQ(number("min(3, fare, 12)"), 3);
  EXPECT_EQ(number("max(3, fare, 12)"), 12);
  EXPECT_EQ(number("clip(fare, 0, 5)"), 5);
  EXPECT_EQ(number("clip(-fare, 0, 5)"), 0);
  EXPECT_TRUE(missing("log(0)"));
  EXPECT_TRUE(missing("sqrt(-1)"));
  EXPECT_TRUE(missing("fare / 0"));
  EXPECT_TRUE(missing("exp(1000)"));
}

TEST(Expression, ListsTheFeaturesItReadsOnce) {
  Expression e("where(is_missing(fare), 0, tips > 0.2 * fare)", "p");
  EXPECT_EQ(e.features(), (std::vector<std::string>{"fare", "tips"}));
}

TEST(Expression, MistakesNameTheCharacterAndWhatCouldStandThere) {
  EXPECT_THAT(mistake("tips > "),
              HasSubstr("expression \"tips > \", at character 8: expected a number, a feature's "
                        "name, a 'text' or ( but the text ends"));
  EXPECT_THAT(mistake("tips >> 2"), HasSubstr("at character 7: expected a number"));
  EXPECT_THAT(mistake("fare = 2"), HasSubstr("at character 6: expected an operator or the end "
                                             "(compare with ==)"));
  EXPECT_THAT(mistake("a && b"), HasSubstr("(write `and`)"));
  EXPECT_THAT(mistake("a || b"), HasSubstr("(write `or`)"));
  EXPECT_THAT(mistake("!a"), HasSubstr("(write `not`)"));
  EXPECT_THAT(mistake("floor(fare)"),
              HasSubstr("at character 1: no function floor; there are log, log1p, exp, sqrt, "
                        "abs, min, max, clip, where, is_missing"));
  EXPECT_THAT(mistake("log(1, 2)"), HasSubstr("log takes 1 value, not 2"));
  EXPECT_THAT(mistake("clip(fare)"), HasSubstr("clip takes 3 values, not 1"));
  EXPECT_THAT(mistake("1 < fare < 3"), HasSubstr("comparisons do not chain"));
  EXPECT_THAT(mistake("payment_type == 'Cash"),
              HasSubstr("at character 17: this text has no closing '"));
  EXPECT_THAT(mistake("`pickup area + 1"), HasSubstr("this `name` has no closing `"));
  EXPECT_THAT(mistake("(fare + 1"), HasSubstr("expected a closing )"));
  EXPECT_THAT(mistake("fare and"), HasSubstr("but the text ends"));
  EXPECT_THAT(mistake("and + 1"), HasSubstr("`and` needs something before it"));
  EXPECT_THAT(mistake(""), HasSubstr("at character 1: expected a number"));
}

TEST(Expression, DeepNestingAndLongTextAreRefusedNotRecursedInto) {
  std::string parentheses = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_THAT(mistake(parentheses), HasSubstr("longer than 4096 characters"));
  std::string nested = std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_THAT(mistake(nested), HasSubstr("nested deeper than 100 operations"));
  std::string chain = "a";
  for (int i = 0; i < 150; ++i) chain += " + a";
  EXPECT_THAT(mistake(chain), HasSubstr("nested deeper than 100 operations"));
  EXPECT_THAT(mistake(std::string(300, '-') + "1"), HasSubstr("nested deeper"));
}

TEST(Expression, AValueOfTheWrongKindIsADataErrorNamingTheRecord) {
  auto data_error = [](const std::string& text) -> std::string {
    try {
      eval(text);
    } catch (const DataError& e) {
      EXPECT_EQ(e.file(), "taxi.tfrecord");
      EXPECT_EQ(e.record(), 7);
      return e.what();
    }
    ADD_FAILURE() << "evaluated: " << text;
    return "";
  };
  EXPECT_THAT(data_error("payment_type * 2"),
              HasSubstr("expression \"payment_type * 2\": * needs a number, and got the text "
                        "\"Credit Card\""));
  EXPECT_THAT(data_error("two + 1"),
              HasSubstr("feature two holds 2 values; an expression reads features of one value"));
  EXPECT_THAT(data_error("payment_type == 1"), HasSubstr("== compares a number with the text"));
  EXPECT_THAT(data_error("log(payment_type)"), HasSubstr("log needs a number"));
}

}  // namespace expression_test
}  // namespace kiln::tabular
