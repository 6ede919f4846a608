#include "kiln/core/json_keys.h"

#include <gtest/gtest.h>

namespace kiln {
namespace json_keys_test {

TEST(JsonKeys, TheFirstKeyNotKnownIsNamedWithTheNearestKnownOne) {
  Json object = Json::parse(R"({"name": 1, "lables": 2, "extra": 3})");
  EXPECT_EQ(first_unknown_key(object, {"name", "labels", "extra"}), "lables");
  EXPECT_EQ(first_unknown_key(object, {"name", "lables", "extra"}), "");
  std::string problem = unknown_key_problem(object, {"name", "labels", "extra"}, "model.yaml");
  EXPECT_NE(problem.find("\"lables\" is no key of model.yaml"), std::string::npos) << problem;
  EXPECT_NE(problem.find("labels"), std::string::npos) << problem;
}

TEST(JsonKeys, AnythingButAnObjectHasNoUnknownKey) {
  EXPECT_EQ(first_unknown_key(Json::array({1, 2}), {}), "");
  EXPECT_EQ(unknown_key_problem(Json("text"), {}, "x"), "");
  EXPECT_EQ(unknown_key_problem(Json::object(), {}, "x"), "");
}

}  // namespace json_keys_test
}  // namespace kiln
