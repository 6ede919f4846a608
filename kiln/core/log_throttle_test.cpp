// A server's lines about what clients do (log_throttle.h): a few a window pass, the rest are
// counted, and the next line that passes says how many were left out. A fake clock: no sleeps.

#include "kiln/core/log_throttle.h"

#include <gtest/gtest.h>

namespace kiln {
namespace log_throttle_test {  // not anonymous: a unity batch shares its unit

using Clock = LogThrottle::Clock;

TEST(LogThrottle, AFewLinesAWindowPassAndTheNextOneSaysHowManyWereLeftOut) {
  Clock::time_point now{};
  LogThrottle throttle(2, std::chrono::seconds(60), [&] { return now; });
  EXPECT_EQ(throttle.admit("a"), "a");
  EXPECT_EQ(throttle.admit("b"), "b");
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(throttle.admit("flood"));
  now += std::chrono::seconds(59);
  EXPECT_FALSE(throttle.admit("still the same window"));
  now += std::chrono::seconds(1);
  EXPECT_EQ(throttle.admit("c"), "(1001 more such lines were left out) c");
  EXPECT_EQ(throttle.admit("d"), "d");
  EXPECT_FALSE(throttle.admit("e"));
  now += std::chrono::minutes(5);
  EXPECT_EQ(throttle.admit("f"), "(1 more such line was left out) f");
}

}  // namespace log_throttle_test
}  // namespace kiln
