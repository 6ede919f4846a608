#include "kiln/serving/rest/json_tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/core/json.h"
#include "kiln/core/text_codec.h"
#include "kiln/io/image_codec.h"
#include "kiln/serving/serving_error.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::map<std::string, TensorSpec> kImage = {{"image", {DType::kFloat32, {-1, 2, 2}}}};
const std::map<std::string, TensorSpec> kTwoInputs = {{"tag", {DType::kString, {-1}}},
                                                      {"signal", {DType::kFloat32, {-1, 3}}}};

std::string error_of(const std::string& body, const std::map<std::string, TensorSpec>& inputs) {
  try {
    parse_predict_request(body, inputs);
  } catch (const ServingError& e) {
    EXPECT_EQ(e.http_status(), 400);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << body;
  return "";
}

// An image input of 1x2 RGB images, channels first, values halved.
const std::map<std::string, TensorSpec> kPicture = {
    {"image", {DType::kFloat32, {-1, 3, 1, 2}, io::ImageInput{3, 1, 2, true, 0.5}}}};

// {"b64": ...} of a 1x2 RGB PNG whose first pixel is (v, v + 10, v + 20) and second v + 30...
std::string png_b64(int v) {
  io::Image image;
  image.height = 1;
  image.width = 2;
  image.channels = 3;
  for (int i = 0; i < 6; ++i) image.pixels.push_back(static_cast<uint8_t>(v + 10 * i));
  return R"({"b64": ")" + base64_encode(io::encode_png(image)) + R"("})";
}

TEST(PredictRequest, AnImageInputTakesEncodedImagesInRowForm) {
  PredictRequest request = parse_predict_request(
      R"({"instances": [)" + png_b64(0) + ", " + png_b64(100) + "]}", kPicture);
  const HostTensor& image = request.inputs.at("image");
  EXPECT_THAT(image.shape, ElementsAre(2, 3, 1, 2));
  EXPECT_THAT(image.numbers, ElementsAre(0, 15, 5, 20, 10, 25, 50, 65, 55, 70, 60, 75));
}

TEST(PredictRequest, AnImageInputTakesEncodedImagesInColumnarFormAndNamed) {
  PredictRequest columnar =
      parse_predict_request(R"({"inputs": {"image": [)" + png_b64(0) + "]}}", kPicture);
  EXPECT_THAT(columnar.inputs.at("image").shape, ElementsAre(1, 3, 1, 2));
  PredictRequest named =
      parse_predict_request(R"({"instances": [{"image": )" + png_b64(0) + "}]}", kPicture);
  EXPECT_EQ(named.inputs.at("image").numbers, columnar.inputs.at("image").numbers);
}

TEST(PredictRequest, AnImageInputStillTakesNumbers) {
  PredictRequest request =
      parse_predict_request(R"({"instances": [[[[1, 2]], [[3, 4]], [[5, 6]]]]})", kPicture);
  EXPECT_THAT(request.inputs.at("image").numbers, ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(PredictRequest, BadImagesAreNamedWithTheirIndex) {
  std::string not_png = R"({"b64": ")" + base64_encode("hello") + R"("})";
  EXPECT_THAT(error_of(R"({"instances": [)" + png_b64(0) + ", " + not_png + "]}", kPicture),
              HasSubstr("input 'image' image 1"));
  EXPECT_THAT(error_of(R"({"inputs": [{"b64": "@@@"}]})", kPicture),
              HasSubstr("input 'image': image 0 is not valid base64"));
  EXPECT_THAT(error_of(R"({"inputs": [)" + png_b64(0) + ", 7]}", kPicture),
              HasSubstr("is not an image ({\"b64\": ...}) as the first one is"));
  // An image input of another size.
  const std::map<std::string, TensorSpec> square = {
      {"image", {DType::kFloat32, {-1, 3, 2, 2}, io::ImageInput{3, 2, 2, true, 1.0}}}};
  EXPECT_THAT(error_of(R"({"instances": [)" + png_b64(0) + "]}", square),
              HasSubstr("is a 1x2 image; the model takes 2x2"));
  // An input that is no image input takes no images.
  EXPECT_THAT(error_of(R"({"instances": [)" + png_b64(0) + "]}", kImage),
              HasSubstr("is not of its type, float32"));
}

TEST(PredictRequest, RowFormStacksInstancesAlongANewFirstDimension) {
  PredictRequest request =
      parse_predict_request(R"({"instances": [[[1, 2], [3, 4]], [[5, 6], [7, 8.5]]]})", kImage);
  EXPECT_EQ(request.signature_name, "serving_default");
  EXPECT_EQ(request.format, RequestFormat::kRow);
  const HostTensor& image = request.inputs.at("image");
  EXPECT_THAT(image.shape, ElementsAre(2, 2, 2));
  EXPECT_THAT(image.numbers, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8.5));
}

TEST(PredictRequest, RowFormWithNamedInputsAndBase64Strings) {
  // api_rest.md's example shape: a list of objects, a binary value as {"b64": ...}.
  PredictRequest request = parse_predict_request(
      R"({"signature_name": "classify", "instances": [
           {"tag": "foo", "signal": [1, 2, 3]},
           {"tag": {"b64": "aGVsbG8="}, "signal": [4, 5, 6]}]})",
      kTwoInputs);
  EXPECT_EQ(request.signature_name, "classify");
  EXPECT_THAT(request.inputs.at("tag").strings, ElementsAre("foo", "hello"));
  EXPECT_THAT(request.inputs.at("tag").shape, ElementsAre(2));
  EXPECT_THAT(request.inputs.at("signal").shape, ElementsAre(2, 3));
  EXPECT_THAT(request.inputs.at("signal").numbers, ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(PredictRequest, ColumnarFormTakesEachInputWhole) {
  PredictRequest request = parse_predict_request(
      R"({"inputs": {"tag": ["a", "b"], "signal": [[1, 2, 3], [4, 5, 6]]}})", kTwoInputs);
  EXPECT_EQ(request.format, RequestFormat::kColumnar);
  EXPECT_THAT(request.inputs.at("signal").shape, ElementsAre(2, 3));
  PredictRequest single = parse_predict_request(R"({"inputs": [[[0, 0], [0, 1]]]})", kImage);
  EXPECT_THAT(single.inputs.at("image").shape, ElementsAre(1, 2, 2));
}

TEST(PredictRequest, ReadsBareNaNAndInfinitiesAsTensorFlowServingWritesThem) {
  PredictRequest request =
      parse_predict_request(R"({"instances": [[[NaN, Infinity], [-Infinity, 1e3]]]})", kImage);
  const auto& numbers = request.inputs.at("image").numbers;
  EXPECT_TRUE(std::isnan(numbers[0]));
  EXPECT_EQ(numbers[1], INFINITY);
  EXPECT_EQ(numbers[2], -INFINITY);
  EXPECT_EQ(numbers[3], 1000);
  // Inside a string they are text.
  PredictRequest text = parse_predict_request(
      R"({"instances": [{"tag": "NaN Infinity", "signal": [0, 0, 0]}]})", kTwoInputs);
  EXPECT_EQ(text.inputs.at("tag").strings[0], "NaN Infinity");
  // Found by fuzz_predict_request: a string that begins with byte 1 is text too.
  PredictRequest control = parse_predict_request(
      R"({"instances": [{"tag": "\u0001NaN", "signal": [NaN, 0, 0]}]})", kTwoInputs);
  EXPECT_EQ(control.inputs.at("tag").strings[0], "\x01NaN");
  EXPECT_TRUE(std::isnan(control.inputs.at("signal").numbers[0]));
}

TEST(PredictRequest, MalformedBodiesAreRefusedSayingWhy) {
  EXPECT_THAT(error_of("{\"instances\": [1,", kImage), HasSubstr("not JSON"));
  EXPECT_THAT(error_of("[1, 2]", kImage), HasSubstr("must be a JSON object"));
  EXPECT_THAT(error_of(R"({"instances": [], "inputs": []})", kImage), HasSubstr("both"));
  EXPECT_THAT(error_of(R"({"signature": "x"})", kImage), HasSubstr("neither"));
  EXPECT_THAT(error_of(R"({"signature_name": 3, "inputs": 1})", kImage),
              HasSubstr("'signature_name' key must be a string value"));
  EXPECT_THAT(error_of(R"({"instances": {"image": 1}})", kImage), HasSubstr("must be a list"));
  EXPECT_THAT(error_of(R"({"instances": []})", kImage), HasSubstr("empty"));
  // TF Serving's parser takes the first of two, nlohmann's the last: neither is sure.
  EXPECT_THAT(error_of(R"({"instances": [[1]], "instances": [[2]]})", kImage),
              HasSubstr("an object holds the key \"instances\" twice"));
  // 60 KB nested 30,000 deep: refused before anything recurses over it.
  EXPECT_THAT(error_of("{\"instances\": " + std::string(30000, '[') + std::string(30000, ']') + "}",
                       kImage),
              HasSubstr("the request body is not JSON: nested more than 64 levels deep at line 1, "
                        "column 78 (byte 77)"));
}

TEST(PredictRequest, ShapesAndTypesMustFitTheSignature) {
  EXPECT_THAT(error_of(R"({"instances": [[[1, 2], [3]]]})", kImage),
              HasSubstr("a list of 1 at depth 2 where the first has 2"));
  EXPECT_THAT(error_of(R"({"instances": [[[1, [2]], [3, 4]]]})", kImage),
              HasSubstr("different depths"));
  EXPECT_THAT(error_of(R"({"instances": [[[1, 2], [3, 4]], [[1, 2, 3], [3, 4, 5]]]})", kImage),
              HasSubstr("shape [2, 3] in instance 1 but [2, 2] in instance 0"));
  EXPECT_THAT(error_of(R"({"instances": [[1, 2, 3]]})", kImage),
              HasSubstr("input 'image' has shape [1, 3]; the signature takes [-1, 2, 2]"));
  EXPECT_THAT(error_of(R"({"instances": [[["a", 2], [3, 4]]]})", kImage),
              HasSubstr("the value \"a\" is not of its type, float32"));
  EXPECT_THAT(error_of(R"({"instances": [[[16777217, 2], [3, 4]]]})", kImage),
              HasSubstr("without losing precision"));
  EXPECT_THAT(
      error_of(R"({"instances": [{"tag": {"b64": "!!"}, "signal": [1, 2, 3]}]})", kTwoInputs),
      HasSubstr("not valid base64"));
  EXPECT_THAT(error_of(R"({"instances": [{"tag": 3, "signal": [1, 2, 3]}]})", kTwoInputs),
              HasSubstr("is not of its type, string"));
}

TEST(PredictRequest, InputNamesMustBeTheSignatures) {
  EXPECT_THAT(error_of(R"({"instances": [{"b64": 5}]})", kTwoInputs),
              HasSubstr("instance 0 is {\"b64\": 5}: base64 text is a string"));
  EXPECT_THAT(error_of(R"({"instances": [{"tag": "a", "signal": [1, 2, 3], "x": 1}]})", kTwoInputs),
              HasSubstr("instance 0 names input 'x', which the signature does not have; it "
                        "takes 'signal', 'tag'"));
  EXPECT_THAT(
      error_of(R"({"instances": [{"tag": "a", "signal": [1, 2, 3]}, {"tag": "b"}]})", kTwoInputs),
      HasSubstr("instance 1 lacks input 'signal'"));
  EXPECT_THAT(error_of(R"({"inputs": {"tag": ["a"]}})", kTwoInputs),
              HasSubstr("'inputs' lacks input 'signal'"));
  EXPECT_THAT(error_of(R"({"instances": [[1, 2, 3]]})", kTwoInputs),
              HasSubstr("the signature takes 2 inputs ('signal', 'tag'): name each one"));
  EXPECT_THAT(
      error_of(R"({"instances": [{"tag": "a", "signal": [1, 2, 3]}, [1, 2, 3]]})", kTwoInputs),
      HasSubstr("all instances must have one form"));
}

HostTensor floats(std::vector<int64_t> shape, std::vector<double> values) {
  return {DType::kFloat32, std::move(shape), std::move(values), {}};
}

TEST(PredictResponse, OneOutputIsWrittenWithoutItsName) {
  std::map<std::string, HostTensor> outputs = {{"scores", floats({2, 2}, {0.25, 0.75, 1, 0})}};
  EXPECT_EQ(predict_response(outputs, RequestFormat::kRow),
            "{\"predictions\":[[0.25,0.75],[1.0,0.0]]}\n");
  EXPECT_EQ(predict_response(outputs, RequestFormat::kColumnar),
            "{\"outputs\":[[0.25,0.75],[1.0,0.0]]}\n");
}

TEST(PredictResponse, SeveralOutputsAreObjectsPerExampleOrByName) {
  std::map<std::string, HostTensor> outputs = {
      {"classes", {DType::kInt64, {2}, {3, 1}, {}}},
      {"image_bytes", {DType::kString, {2}, {}, {"hi", std::string("\0\1", 2)}}},
      {"ok", {DType::kBool, {2}, {1, 0}, {}}}};
  std::string row = predict_response(outputs, RequestFormat::kRow);
  EXPECT_EQ(row,
            "{\"predictions\":[{\"classes\":3,\"image_bytes\":{\"b64\":\"aGk=\"},\"ok\":true},"
            "{\"classes\":1,\"image_bytes\":{\"b64\":\"AAE=\"},\"ok\":false}]}\n");
  Json columnar = Json::parse(predict_response(outputs, RequestFormat::kColumnar));
  EXPECT_EQ(columnar["outputs"]["classes"], Json({3, 1}));
  EXPECT_EQ(columnar["outputs"]["ok"], Json({true, false}));
}

TEST(PredictResponse, FloatsAreWrittenAsTensorFlowServingWritesThem) {
  // json_tensor_test's figures: six significant digits, ".0" after whole numbers.
  EXPECT_EQ(format_float(9000000, true), "9e+06");
  EXPECT_EQ(format_float(0.00003, true), "3e-05");
  EXPECT_EQ(format_float(2, true), "2.0");
  EXPECT_EQ(format_float(0.2f, true), "0.2");
  EXPECT_EQ(format_float(0.123456789f, true), "0.123456791");
  EXPECT_EQ(format_float(0.1, false), "0.1");
  EXPECT_EQ(format_float(NAN, true), "NaN");
  EXPECT_EQ(format_float(-INFINITY, true), "-Infinity");
  std::map<std::string, HostTensor> outputs = {{"y", floats({1}, {NAN})}};
  EXPECT_EQ(predict_response(outputs, RequestFormat::kRow), "{\"predictions\":[NaN]}\n");
}

TEST(ServingError, MapsStatusCodesToTensorFlowServingsHttpStatuses) {
  EXPECT_EQ(http_status(StatusCode::kInvalidArgument), 400);
  EXPECT_EQ(http_status(StatusCode::kFailedPrecondition), 400);
  EXPECT_EQ(http_status(StatusCode::kNotFound), 404);
  EXPECT_EQ(http_status(StatusCode::kResourceExhausted), 429);
  EXPECT_EQ(http_status(StatusCode::kUnimplemented), 501);
  EXPECT_EQ(http_status(StatusCode::kUnavailable), 503);
  EXPECT_EQ(http_status(StatusCode::kInternal), 500);
  EXPECT_EQ(Json::parse(error_body("bad \"x\""))["error"], "bad \"x\"");
}

}  // namespace
}  // namespace kiln::serving
