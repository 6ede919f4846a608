// Examples of raw features in request bodies: each JSON value made the tf.Example feature
// TensorFlow Serving makes of it, the context added to every example, a :predict of features told
// from one of tensors, and every malformed body refused naming the example and feature.

#include "kiln/serving/rest/example_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

using Kind = io::Feature::Kind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

io::Feature feature(const std::string& json) { return feature_from_json(Json::parse(json), "f"); }

void expect_refused(const std::string& body, const std::string& message) {
  try {
    parse_examples_request(body);
    ADD_FAILURE() << "took " << body;
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_THAT(e.what(), HasSubstr(message)) << body;
  }
}

TEST(ExampleRequest, EachJsonValueBecomesTheFeatureTensorFlowServingMakes) {
  EXPECT_EQ(feature("3").kind, Kind::kInt64);
  EXPECT_THAT(feature("[3, -4]").ints, ElementsAre(3, -4));
  EXPECT_EQ(feature("2.5").kind, Kind::kFloat);
  EXPECT_THAT(feature("[1.5, 2.0]").floats, ElementsAre(1.5f, 2.0f));
  EXPECT_THAT(feature(R"("Dream")").bytes, ElementsAre("Dream"));
  EXPECT_THAT(feature(R"(["a", {"b64": "aGVsbG8="}])").bytes, ElementsAre("a", "hello"));
  EXPECT_THAT(feature("[1, true, false]").ints, ElementsAre(1, 1, 0));
  EXPECT_EQ(feature("[]").kind, Kind::kNone);
  EXPECT_EQ(feature("null").kind, Kind::kNone);
}

TEST(ExampleRequest, IntegersAmongDecimalsAreReadAsFloatsWhereverTheyStand) {
  io::Feature mixed = feature("[1, 2.5, 3]");
  EXPECT_EQ(mixed.kind, Kind::kFloat);
  EXPECT_THAT(mixed.floats, ElementsAre(1.0f, 2.5f, 3.0f));
  EXPECT_TRUE(mixed.ints.empty());
}

TEST(ExampleRequest, BareNonFiniteNumbersAreFloats) {
  ExamplesRequest request =
      parse_examples_request(R"({"examples": [{"x": NaN, "y": [-Infinity, 1]}]})");
  const io::Features& example = request.examples.at(0);
  EXPECT_TRUE(std::isnan(example.at("x").floats.at(0)));
  EXPECT_THAT(example.at("y").floats, ElementsAre(-INFINITY, 1.0f));
}

TEST(ExampleRequest, TheContextGoesIntoEveryExampleAndTheSignatureIsKept) {
  ExamplesRequest request = parse_examples_request(
      R"({"signature_name": "price", "context": {"island": "Dream"},
          "examples": [{"bill": 39.1}, {"bill": 40, "island": "Biscoe"}], "ignored": 1})");
  EXPECT_EQ(request.signature_name, "price");
  ASSERT_EQ(request.examples.size(), 2u);
  EXPECT_THAT(request.examples[0].at("island").bytes, ElementsAre("Dream"));
  EXPECT_THAT(request.examples[1].at("island").bytes, ElementsAre("Biscoe"));  // its own wins
  EXPECT_EQ(request.examples[1].at("bill").kind, Kind::kInt64);
  EXPECT_EQ(parse_examples_request(R"({"examples": [{}]})").signature_name, "serving_default");
}

// 600 KB of context keys and 150,000 empty examples (a 1 MB body) would copy the context nine
// billion times: the copies are counted first and refused, naming the limit.
TEST(ExampleRequest, AContextCopiedIntoTooManyExamplesIsRefusedBeforeTheCopies) {
  std::string context = "{";
  for (int i = 0; i < 60000; ++i) context += "\"k" + std::to_string(i) + "\": 1, ";
  context += "\"last\": 1}";
  std::string examples = "[{}";
  for (int i = 1; i < 150000; ++i) examples += ", {}";
  examples += "]";
  try {
    parse_examples_request(R"({"context": )" + context + R"(, "examples": )" + examples + "}");
    ADD_FAILURE() << "took it";
  } catch (const ServingError& e) {
    EXPECT_EQ(e.code(), StatusCode::kResourceExhausted);
    EXPECT_THAT(e.what(), HasSubstr("copied into each of 150000 examples would be more than the "
                                    "67108864 bytes one request may expand to"));
  }
  ExamplesRequest fits =
      parse_examples_request(R"({"context": )" + context + R"(, "examples": [{}, {}]})");
  EXPECT_EQ(fits.examples[1].size(), 60001u);
}

TEST(ExampleRequest, MalformedBodiesNameWhatIsWrong) {
  expect_refused(R"({"examples": [)", "not JSON");
  expect_refused(R"([1, 2])", "must be a JSON object");
  expect_refused(R"({"instances": []})", "no 'examples'");
  expect_refused(R"({"examples": {"x": 1}})", "'examples' must be a list");
  expect_refused(R"({"examples": [[1, 2]]})", "example 0 must be an object");
  expect_refused(R"({"examples": []})", "'examples' is an empty list");
  expect_refused(R"({"examples": [{"x": 1}, {"x": [[1]]}]})",
                 "example 1 feature \"x\": [1] is not a feature value");
  expect_refused(R"({"examples": [{"x": {"y": 1}}]})", "is not a feature value");
  expect_refused(R"({"examples": [{"x": [1, "a"]}]})",
                 "\"a\" is a bytes_list in a list of int64_list");
  expect_refused(R"({"examples": [{"x": ["a", 1.5]}]})", "1.5 is a float_list in a list of");
  expect_refused(R"({"examples": [{"x": {"b64": "@@"}}]})", "is not valid base64");
  expect_refused(R"({"examples": [{"x": 18446744073709551615}]})", "does not fit an int64");
  expect_refused(R"({"examples": [{"x": 1.0}, {"x": [2.5, -1e39]}]})",
                 "example 1 feature \"x\": -1e+39 is beyond float32");
  expect_refused(R"({"context": [1], "examples": [{}]})", "'context' must be an object");
  expect_refused(R"({"signature_name": 3, "examples": []})", "'signature_name' key must be");
}

const std::vector<std::string> kFeatures = {"bill", "island"};

std::optional<ExamplesRequest> predict(const std::string& body) {
  return parse_feature_predict_request(body, kFeatures, {"input"});
}

TEST(ExampleRequest, PredictBodiesOfTensorsAreLeftToTheTensorReader) {
  EXPECT_FALSE(predict(R"({"instances": [[1.0, 2.0]]})"));
  EXPECT_FALSE(predict(R"({"instances": [{"input": [1.0, 2.0]}]})"));
  EXPECT_FALSE(predict(R"({"inputs": [[1.0, 2.0]]})"));
  EXPECT_FALSE(predict(R"({"inputs": {"input": [[1.0, 2.0]]}})"));
  EXPECT_FALSE(predict(R"({"instances": []})"));
  EXPECT_FALSE(predict(R"({"instances": [{"b64": "aGVsbG8="}]})"));
  EXPECT_FALSE(predict(R"({"instances": [1], "inputs": [1]})"));
}

TEST(ExampleRequest, PredictBodiesOfFeaturesGiveOneExamplePerInstanceOrColumnEntry) {
  std::optional<ExamplesRequest> rows =
      predict(R"({"instances": [{"bill": 39.1, "island": "Dream"}, {"bill": 40}]})");
  ASSERT_TRUE(rows);
  EXPECT_EQ(rows->format, RequestFormat::kRow);
  ASSERT_EQ(rows->examples.size(), 2u);
  EXPECT_FALSE(rows->examples[1].count("island"));
  std::optional<ExamplesRequest> columns = predict(
      R"({"signature_name": "s", "inputs": {"bill": [39.1, 40], "island": ["Dream", null]}})");
  ASSERT_TRUE(columns);
  EXPECT_EQ(columns->format, RequestFormat::kColumnar);
  EXPECT_EQ(columns->signature_name, "s");
  ASSERT_EQ(columns->examples.size(), 2u);
  EXPECT_THAT(columns->examples[0].at("island").bytes, ElementsAre("Dream"));
  EXPECT_EQ(columns->examples[1].at("island").kind, Kind::kNone);
  // A feature that shares the tensor input's name is a feature.
  std::optional<ExamplesRequest> shared =
      parse_feature_predict_request(R"({"instances": [{"input": 1}]})", {"input"}, {"input"});
  ASSERT_TRUE(shared);
  EXPECT_THAT(shared->examples[0].at("input").ints, ElementsAre(1));
}

TEST(ExampleRequest, PredictBodiesOfFeaturesRefuseUnknownFeaturesAndRaggedColumns) {
  auto refused = [](const std::string& body, const std::string& message) {
    try {
      predict(body);
      ADD_FAILURE() << "took " << body;
    } catch (const ServingError& e) {
      EXPECT_THAT(e.what(), HasSubstr(message)) << body;
    }
  };
  refused(R"({"instances": [{"bill": 1}, {"bil": 2}]})",
          "instance 1: the model reads no feature \"bil\"; it reads bill, island");
  refused(R"({"inputs": {"bill": [1, 2], "island": ["a"]}})",
          "'inputs' feature \"island\" has 1 values and \"bill\" 2");
  refused(R"({"inputs": {"bill": 1}})", "'inputs' feature \"bill\" must be a list");
  refused(R"({"instances": [{"bill": 1}, 2]})", "instance 1 must be an object");
}

}  // namespace
}  // namespace kiln::serving
