// A board request's query (query_params.h): escapes and `+` decoded as URLSearchParams writes
// them, a name given twice keeps both values, an absent one is ""; a broken escape and a NUL byte
// (which once reached a run's path as `run=a%00b`) are refused naming the parameter.

#include "kiln/board/query_params.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::board {
namespace query_params_test {  // not anonymous: a unity batch shares its unit

using ::testing::HasSubstr;

TEST(QueryParams, EscapesAndPlusesAreDecodedAndRepeatedNamesKept) {
  QueryParams params = QueryParams::parse("run=a%2Fb+c&filter=x&&filter=y%3D1&flag&sort=");
  EXPECT_EQ(params.get("run"), "a/b c");
  EXPECT_EQ(params.all("filter"), (std::vector<std::string>{"x", "y=1"}));
  EXPECT_EQ(params.get("flag"), "");
  EXPECT_EQ(params.get("sort"), "");
  EXPECT_EQ(params.get("absent"), "");
  EXPECT_TRUE(params.all("absent").empty());
  EXPECT_EQ(QueryParams::parse("").get("run"), "");
  EXPECT_EQ(QueryParams::parse("name=%e2%9c%93").get("name"), "\xe2\x9c\x93");
}

TEST(QueryParams, ANulByteOrABrokenEscapeIsRefusedNamingTheParameter) {
  try {
    QueryParams::parse("run=fashion%00/../x");
    FAIL() << "a NUL byte was let through";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("parameter run holds a NUL byte"));
  }
  for (const char* broken : {"run=%", "run=%4", "run=%zz", "run=a%4g"})
    EXPECT_THROW(QueryParams::parse(broken), UsageError) << broken;
  EXPECT_THROW(QueryParams::parse("%00=1"), UsageError);
}

}  // namespace query_params_test
}  // namespace kiln::board
