// The answers of :classify and :regress from a signature's outputs: every class with its
// probability, named by the labels or by its id, a sigmoid's one column as two classes, one
// number per example for regress; and the signatures that cannot answer them, named.

#include "kiln/serving/example_results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/serving/rest/responses.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

using ::testing::HasSubstr;

SignatureOutput output(OutputOp op, std::vector<int64_t> shape) {
  return {{DType::kFloat32, std::move(shape)}, "", op, ""};
}

HostTensor values(std::vector<int64_t> shape, std::vector<double> numbers) {
  return {DType::kFloat32, std::move(shape), std::move(numbers), {}};
}

TEST(ExampleResults, ClassifyGivesEveryClassAndItsScoreInClassOrder) {
  SignatureOutput softmax = output(OutputOp::kSoftmax, {-1, 3});
  HostTensor scores = values({2, 3}, {0.5, 0.25, 0.25, 0.125, 0.125, 0.75});
  EXPECT_EQ(Json::parse(classify_response(softmax, scores, {})),
            Json::parse(R"({"results": [[["0", 0.5], ["1", 0.25], ["2", 0.25]],
                                         [["0", 0.125], ["1", 0.125], ["2", 0.75]]]})"));
  EXPECT_EQ(Json::parse(classify_response(softmax, values({1, 3}, {0.5, 0.25, 0.25}),
                                          {"Adelie", "Chinstrap", "Gentoo"}))["results"][0][2],
            Json::parse(R"(["Gentoo", 0.25])"));
}

TEST(ExampleResults, OneSigmoidColumnIsTwoClassesAndSeveralAreEachTheirOwn) {
  EXPECT_EQ(Json::parse(classify_response(output(OutputOp::kSigmoid, {-1, 1}),
                                          values({2, 1}, {0.75, 0.125}), {"no", "yes"})),
            Json::parse(R"({"results": [[["no", 0.25], ["yes", 0.75]],
                                         [["no", 0.875], ["yes", 0.125]]]})"));
  EXPECT_EQ(Json::parse(classify_response(output(OutputOp::kSigmoid, {-1, 2}),
                                          values({1, 2}, {0.75, 0.125}), {})),
            Json::parse(R"({"results": [[["0", 0.75], ["1", 0.125]]]})"));
}

TEST(ExampleResults, RegressGivesOneNumberPerExample) {
  EXPECT_EQ(regress_response(values({3, 1}, {1.5, -2.0, 1e7})),
            R"({"results": [1.5, -2.0, 1e+07]})");
}

TEST(ExampleResults, SignaturesThatCannotAnswerAreNamedWithTheOnesThatCan) {
  Signatures signatures;
  signatures["serving_default"].outputs["kind/probabilities"] = output(OutputOp::kSoftmax, {-1, 2});
  signatures["serving_default"].outputs["price/predictions"] = output(OutputOp::kIdentity, {-1, 1});
  signatures["kind"].outputs["probabilities"] = output(OutputOp::kSoftmax, {-1, 2});
  signatures["price"].outputs["predictions"] = output(OutputOp::kIdentity, {-1, 1});
  signatures["wide"].outputs["predictions"] = output(OutputOp::kIdentity, {-1, 3});
  EXPECT_EQ(&classify_output(signatures, "kind"), &signatures["kind"].outputs["probabilities"]);
  EXPECT_EQ(&regress_output(signatures, "price"), &signatures["price"].outputs["predictions"]);
  auto refused = [](const std::function<void()>& call, const std::string& message) {
    try {
      call();
      ADD_FAILURE() << "answered";
    } catch (const ServingError& e) {
      EXPECT_EQ(e.http_status(), 400);
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  refused([&] { classify_output(signatures, "serving_default"); },
          "signature \"serving_default\" has none: give \"signature_name\" one of \"kind\"");
  refused([&] { regress_output(signatures, "kind"); },
          "give \"signature_name\" one of \"price\", \"wide\"");
  refused([&] { regress_output(signatures, "wide"); },
          "one number per example; signature \"wide\" predicts [-1, 3]");
  Signatures embed;
  embed["embed"].outputs["embedding"] = output(OutputOp::kLayer, {-1, 8});
  refused([&] { classify_output(embed, "embed"); }, "has none; use :predict");
  // gRPC's clients are told in gRPC's words.
  refused([&] { classify_output(embed, "embed", ExamplesApi::kGrpc); },
          "Classify needs an output 'probabilities'");
  refused([&] { classify_output(embed, "embed", ExamplesApi::kGrpc); }, "has none; use Predict");
  refused([&] { regress_output(signatures, "kind", ExamplesApi::kGrpc); },
          "give model_spec.signature_name one of \"price\", \"wide\"");
  refused([&] { regress_output(signatures, "wide", ExamplesApi::kGrpc); },
          "Regress answers one number per example; signature \"wide\" predicts [-1, 3] (use "
          "Predict)");
}

}  // namespace
}  // namespace kiln::serving
