#include "kiln/core/input_layout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln {
namespace {

using ::testing::HasSubstr;

InputLayout two_parts() { return {{{"wide", 0, 3}, {"deep", 3, 2}}, {{"c", 4, 7, 3}}}; }

TEST(InputLayout, FindsItsPartsAndTheIndicesInEach) {
  InputLayout layout = two_parts();
  ASSERT_NE(layout.find("deep"), nullptr);
  EXPECT_EQ(layout.find("deep")->offset, 3);
  EXPECT_EQ(layout.find("other"), nullptr);
  EXPECT_EQ(layout.names(), "wide, deep");
  EXPECT_TRUE(layout.indices_in(*layout.find("wide")).empty());
  ASSERT_EQ(layout.indices_in(*layout.find("deep")).size(), 1u);
  EXPECT_EQ(layout.indices_in(*layout.find("deep"))[0].column, "c");
}

TEST(InputLayout, JsonRoundTrips) {
  Json json = layout_json(two_parts());
  EXPECT_EQ(layout_json(parse_layout(json, 5, "inputs.json")), json);
}

TEST(InputLayout, AMalformedLayoutIsAConfigErrorNamingTheFile) {
  auto problem_of = [](const std::string& text) {
    try {
      parse_layout(Json::parse(text), 2, "run/inputs.json");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(problem_of("[]"), HasSubstr("run/inputs.json"));
  EXPECT_THAT(problem_of(R"({"parts": 3})"), HasSubstr("\"parts\" is not a list"));
  EXPECT_THAT(problem_of(R"({"parts": [{"name": "a", "offset": 0}]})"), HasSubstr("\"width\""));
  EXPECT_THAT(problem_of(R"({"parts": [{"name": "a", "offset": 0, "width": -1}]})"),
              HasSubstr("\"width\""));
  EXPECT_THAT(problem_of(R"({"parts": [{"name": "a", "offset": 2, "width": 1}]})"),
              HasSubstr("does not follow"));
  EXPECT_THAT(problem_of(R"({"parts": [{"name": "a", "offset": 0, "width": 1}]})"),
              HasSubstr("span 1 of the row's 2 numbers"));
  // A key a layout does not have is refused, wherever it is (a campaign's find).
  EXPECT_THAT(problem_of(R"({"parts": [], "index": []})"),
              HasSubstr("\"index\" is no key of the input layout"));
  EXPECT_THAT(problem_of(R"({"parts": [{"name": "a", "offset": 0, "width": 2, "dtype": 1}]})"),
              HasSubstr("\"dtype\" is no key of an input part"));
  EXPECT_THAT(problem_of(R"({"indices": [{"column": "c", "position": 1, "cardinality": 3,
                                          "embedding_dim": 0, "vocab": []}]})"),
              HasSubstr("\"vocab\" is no key of an input index"));
  // Without named inputs a layout holds indices alone.
  EXPECT_EQ(problem_of(R"({"indices": [{"column": "c", "position": 1, "cardinality": 3,
                                        "embedding_dim": 0}]})"),
            "accepted");
  std::string part = R"({"parts": [{"name": "a", "offset": 0, "width": 2}], "indices": )";
  EXPECT_THAT(problem_of(part + R"([{"column": "c", "position": 2, "cardinality": 3,
                                     "embedding_dim": 0}]})"),
              HasSubstr("outside the row"));
  EXPECT_THAT(problem_of(part + R"([{"column": "c", "position": 1, "cardinality": 0,
                                     "embedding_dim": 0}]})"),
              HasSubstr("has no bucket"));
  EXPECT_EQ(problem_of(part + R"([{"column": "c", "position": 1, "cardinality": 3,
                                   "embedding_dim": 0}]})"),
            "accepted");
}

}  // namespace
}  // namespace kiln
