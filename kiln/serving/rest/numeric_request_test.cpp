#include "kiln/serving/rest/numeric_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "kiln/serving/rest/json_tensor.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;

const std::map<std::string, TensorSpec> kImage = {{"image", {DType::kFloat32, {-1, 2, 2}}}};
const std::map<std::string, TensorSpec> kCounts = {{"counts", {DType::kInt32, {-1}}}};
const std::map<std::string, TensorSpec> kTwoInputs = {{"a", {DType::kFloat64, {-1, 2}}},
                                                      {"b", {DType::kInt64, {-1}}}};

SignatureInputs only(const std::map<std::string, TensorSpec>& inputs) {
  return
      [&inputs](const std::string&) -> const std::map<std::string, TensorSpec>& { return inputs; };
}

std::optional<PredictRequest> fast(const std::string& body,
                                   const std::map<std::string, TensorSpec>& inputs) {
  return parse_numeric_request(body, only(inputs));
}

// The fast reader's answer is the general reader's, to the bit.
void expect_same_as_in_full(const std::string& body,
                            const std::map<std::string, TensorSpec>& inputs) {
  std::optional<PredictRequest> quick = fast(body, inputs);
  ASSERT_TRUE(quick) << body;
  PredictRequest full = parse_predict_request_in_full(body, only(inputs));
  EXPECT_EQ(quick->signature_name, full.signature_name);
  EXPECT_EQ(quick->format, full.format);
  ASSERT_EQ(quick->inputs.size(), full.inputs.size());
  for (const auto& [name, tensor] : full.inputs) {
    const HostTensor& other = quick->inputs.at(name);
    EXPECT_EQ(other.dtype, tensor.dtype) << name;
    EXPECT_EQ(other.shape, tensor.shape) << name;
    ASSERT_EQ(other.numbers.size(), tensor.numbers.size()) << name;
    EXPECT_EQ(std::memcmp(other.numbers.data(), tensor.numbers.data(),
                          tensor.numbers.size() * sizeof(double)),
              0)
        << body;
  }
}

TEST(NumericRequest, ReadsRowFormImagesAsTheGeneralReaderDoes) {
  std::string body = R"({"instances": [[[0.5, 1e-3], [-2.25E2, 0]], [[3, -0], [1.5e+1, -0.0]]]})";
  expect_same_as_in_full(body, kImage);
  std::optional<PredictRequest> request = fast(body, kImage);
  EXPECT_EQ(request->format, RequestFormat::kRow);
  EXPECT_THAT(request->inputs.at("image").shape, ElementsAre(2, 2, 2));
  EXPECT_THAT(request->inputs.at("image").numbers,
              ElementsAre(0.5, 0.001, -225, 0, 3, 0, 15, -0.0));
  // "-0" is the integer 0, as the general reader takes it; "-0.0" keeps its sign.
  EXPECT_FALSE(std::signbit(request->inputs.at("image").numbers[5]));
  EXPECT_TRUE(std::signbit(request->inputs.at("image").numbers[7]));
}

TEST(NumericRequest, ReadsColumnarFormUnnamedAndNamedWithASignatureName) {
  expect_same_as_in_full("\t{\"inputs\":[[[1,2],[3,4]]] ,\n\"signature_name\":\"s\"}\r\n", kImage);
  expect_same_as_in_full(R"({"signature_name": "serving_default", "inputs": {"b": [7, -8],
                             "a": [[0.1, 0.2], [1e300, 4]]}})",
                         kTwoInputs);
  std::optional<PredictRequest> request = fast(
      R"({"inputs": {"b": [7, -8], "a": [[1, 2], [3, 4]]}, "signature_name": "x"})", kTwoInputs);
  ASSERT_TRUE(request);
  EXPECT_EQ(request->signature_name, "x");
  EXPECT_EQ(request->format, RequestFormat::kColumnar);
  EXPECT_THAT(request->inputs.at("b").numbers, ElementsAre(7, -8));
}

TEST(NumericRequest, ReadsIntegersIntoIntegerInputsWithinTheirRange) {
  expect_same_as_in_full(R"({"instances": [2147483647, -2147483648, 0]})", kCounts);
  EXPECT_FALSE(fast(R"({"instances": [2147483648]})", kCounts));
  EXPECT_FALSE(fast(R"({"instances": [-2147483649]})", kCounts));
  EXPECT_FALSE(fast(R"({"instances": [1.0]})", kCounts));
  EXPECT_FALSE(fast(R"({"instances": [1e2]})", kCounts));
}

TEST(NumericRequest, LeavesFloatsTheTypeWouldChangeToTheGeneralReader) {
  // An integer a float32 cannot hold exactly, and a number beyond its range, are errors there.
  expect_same_as_in_full(R"({"instances": [[[16777216, 1], [2, 3]]]})", kImage);
  EXPECT_FALSE(fast(R"({"instances": [[[16777217, 1], [2, 3]]]})", kImage));
  EXPECT_FALSE(fast(R"({"instances": [[[1e39, 1], [2, 3]]]})", kImage));
  EXPECT_FALSE(fast(R"({"instances": [[[1e400, 1], [2, 3]]]})", kImage));
  EXPECT_FALSE(fast(R"({"instances": [[[99999999999999999999, 1], [2, 3]]]})", kImage));
}

TEST(NumericRequest, LeavesEveryOtherBodyToTheGeneralReader) {
  for (const char* body :
       {R"({"instances": [[[NaN, 1], [2, 3]]]})",           // not JSON's numbers
        R"({"instances": [[[Infinity, 1], [2, 3]]]})",      //
        R"({"instances": [[[01, 1], [2, 3]]]})",            // a leading zero
        R"({"instances": [[[.5, 1], [2, 3]]]})",            //
        R"({"instances": [[[1., 1], [2, 3]]]})",            //
        R"({"instances": [[[+1, 1], [2, 3]]]})",            //
        R"({"instances": [[[1e, 1], [2, 3]]]})",            //
        R"({"instances": [[[1 2, 1], [2, 3]]]})",           //
        R"({"instances": [[["1", 1], [2, 3]]]})",           // a string
        R"({"instances": [[[true, 1], [2, 3]]]})",          // a bool
        R"({"instances": [[[1, 1], [2]]]})",                // ragged
        R"({"instances": [[[1, 1], [2, [3]]]]})",           // lists of different depths
        R"({"instances": [[[1, 1], 2]]})",                  //
        R"({"instances": [[[1, 1, 1], [2, 3, 4]]]})",       // a shape the signature refuses
        R"({"instances": []})",                             // empty
        R"({"instances": [[[], []]]})",                     //
        R"({"instances": [{"image": [[1, 2], [3, 4]]}]})",  // named instances
        R"({"inputs": 1})",                                 // a scalar
        R"({"instances": [[[1, 1], [2, 3]]], "inputs": [[[1, 1], [2, 3]]]})",  // both forms
        R"({"instances": [[[1, 1], [2, 3]]], "instances": [[[1, 1], [2, 3]]]})",
        R"({"instances": [[[1, 1], [2, 3]]], "extra": 1})",                // another key
        R"({"signature_name": "a\"b", "instances": [[[1, 1], [2, 3]]]})",  // an escape
        R"({"signature_name": 1, "instances": [[[1, 1], [2, 3]]]})",
        R"({"instances": [[[1, 1], [2, 3]]]} x)",  // more after the body
        R"({"instances": [[[1, 1], [2, 3]]])",     // cut short
        R"({"instances": [[[1, 1], [2, 3]],]})",   // a trailing comma
        R"([[[1, 1], [2, 3]]])",                   // not an object
        R"({})",
        ""}) {
    EXPECT_FALSE(fast(body, kImage)) << body;
  }
  EXPECT_FALSE(fast(R"({"inputs": {"a": [[1, 2]]}})", kTwoInputs));  // an input missing
  EXPECT_FALSE(fast(R"({"inputs": {"a": [[1, 2]], "b": [1], "c": [1]}})", kTwoInputs));
  EXPECT_FALSE(fast(R"({"inputs": {"a": [[1, 2]], "a": [[1, 2]]}})", kTwoInputs));
  EXPECT_FALSE(fast(R"({"instances": [[1, 2]]})", kTwoInputs));  // unnamed, for two inputs
}

TEST(NumericRequest, WhatItLeavesStillGetsTheGeneralReadersAnswer) {
  SignatureInputs inputs = only(kImage);
  PredictRequest with_nan = parse_predict_request(R"({"instances": [[[NaN, 1], [2, 3]]]})", inputs);
  EXPECT_TRUE(std::isnan(with_nan.inputs.at("image").numbers[0]));
  try {
    parse_predict_request(R"({"instances": [[[1, 1], [2]]]})", inputs);
    ADD_FAILURE() << "a ragged list was taken";
  } catch (const ServingError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("must all be as long"));
  }
}

TEST(NumericRequest, AsksForTheSignatureOnlyOfAWholeBodyAndLetsItsErrorThrough) {
  int asked = 0;
  SignatureInputs unknown =
      [&asked](const std::string& name) -> const std::map<std::string, TensorSpec>& {
    ++asked;
    throw ServingError(StatusCode::kInvalidArgument, "no signature " + name);
  };
  EXPECT_FALSE(parse_numeric_request(R"({"signature_name": "nope", "instances": [1, )", unknown));
  EXPECT_EQ(asked, 0);
  EXPECT_THROW(parse_numeric_request(R"({"signature_name": "nope", "instances": [1]})", unknown),
               ServingError);
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace kiln::serving
