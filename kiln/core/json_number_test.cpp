#include "kiln/core/json_number.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/core/error.h"

namespace kiln {
namespace {

TEST(JsonNumber, NonFiniteValuesSurviveATextRoundTrip) {
  double inf = std::numeric_limits<double>::infinity();
  for (double value : {0.25, -3.0, 1e300, inf, -inf}) {
    Json back = Json::parse(Json{{"v", number_to_json(value)}}.dump());
    EXPECT_EQ(number_from_json(back.at("v")), value);
  }
  Json nan = Json::parse(Json{{"v", number_to_json(std::nan(""))}}.dump());
  EXPECT_EQ(nan.at("v"), "nan");
  EXPECT_TRUE(std::isnan(number_from_json(nan.at("v"))));
}

TEST(JsonNumber, NullReadsAsNanAsOlderFilesWroteIt) {
  EXPECT_TRUE(std::isnan(number_from_json(Json())));
}

TEST(JsonNumber, AnythingElseIsAnErrorThatShowsIt) {
  for (const char* text : {R"("infinity")", "true", "[1]", R"("1.5")"}) {
    try {
      number_from_json(Json::parse(text));
      ADD_FAILURE() << text << " was read as a number";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(text));
    }
  }
}

}  // namespace
}  // namespace kiln
