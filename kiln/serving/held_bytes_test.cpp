// The server's budget for requests' inputs (held_bytes.h): what fits is taken, what would pass
// the cap is not, a request alone larger than the cap is taken when nothing else is held, and
// what is given back frees room.

#include "kiln/serving/held_bytes.h"

#include <gtest/gtest.h>

namespace kiln::serving {
namespace held_bytes_test {

TEST(HeldBytes, TakesWhatFitsUnderItsCapAndGivesBack) {
  HeldBytes held(100);
  EXPECT_TRUE(held.take(60));
  EXPECT_TRUE(held.take(40));
  EXPECT_FALSE(held.take(1)) << "at the cap";
  EXPECT_EQ(held.held(), 100u);
  held.give_back(40);
  EXPECT_FALSE(held.take(41));
  EXPECT_TRUE(held.take(40));
  held.give_back(100);
  EXPECT_EQ(held.held(), 0u);
}

TEST(HeldBytes, ARequestLargerThanTheCapIsTakenOnlyAlone) {
  HeldBytes held(100);
  EXPECT_TRUE(held.take(10));
  EXPECT_FALSE(held.take(500));
  held.give_back(10);
  EXPECT_TRUE(held.take(500)) << "within the per-request limits, and alone: it is served";
  EXPECT_FALSE(held.take(1));
  held.give_back(500);
  EXPECT_EQ(held.held(), 0u);
}

TEST(HeldBytes, CountsTheNumbersAndStringsOfARequestsInputs) {
  HostTensors inputs;
  inputs["x"] = {DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6}, {}};
  inputs["s"] = {DType::kString, {2}, {}, {"abc", ""}};
  EXPECT_EQ(bytes_held_by(inputs), 6 * sizeof(double) + 2 * sizeof(std::string) + 3);
}

}  // namespace held_bytes_test
}  // namespace kiln::serving
