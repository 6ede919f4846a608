#include "kiln/serving/signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"

namespace kiln::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Signatures classifier() {
  Signature signature;
  signature.inputs["input"] = {
      DType::kFloat32, {-1, 1, 28, 28}, io::ImageInput{1, 28, 28, true, 1.0 / 255}};
  signature.outputs["classes"] = {{DType::kString, {-1}}, "", OutputOp::kArgmaxLabel, ""};
  signature.outputs["probabilities"] = {{DType::kFloat32, {-1, 10}}, "", OutputOp::kSoftmax, ""};
  Signature embed;
  embed.inputs = signature.inputs;
  embed.outputs["embedding"] = {{DType::kFloat32, {-1, 128}}, "", OutputOp::kLayer, "layers.8"};
  return {{"serving_default", signature}, {"embed", embed}};
}

TEST(Signature, RoundTripsThroughJson) {
  Signatures read = parse_signatures(signatures_json(classifier()), "model.yaml");
  ASSERT_EQ(read.size(), 2u);
  const Signature& main = read.at("serving_default");
  EXPECT_EQ(main.inputs.at("input").dtype, DType::kFloat32);
  EXPECT_THAT(main.inputs.at("input").shape, ElementsAre(-1, 1, 28, 28));
  ASSERT_TRUE(main.inputs.at("input").image.has_value());
  EXPECT_TRUE(*main.inputs.at("input").image == (io::ImageInput{1, 28, 28, true, 1.0 / 255}));
  EXPECT_FALSE(main.outputs.at("probabilities").spec.image.has_value());
  EXPECT_EQ(main.outputs.at("classes").op, OutputOp::kArgmaxLabel);
  EXPECT_EQ(main.outputs.at("classes").spec.dtype, DType::kString);
  EXPECT_EQ(main.outputs.at("probabilities").op, OutputOp::kSoftmax);
  EXPECT_EQ(read.at("embed").outputs.at("embedding").layer, "layers.8");
}

TEST(Signature, WritesWhatEachOutputComesFrom) {
  Json json = signatures_json(classifier());
  EXPECT_EQ(json["serving_default"]["outputs"]["classes"]["op"], "argmax_label");
  EXPECT_EQ(json["serving_default"]["outputs"]["probabilities"]["from"], "");
  EXPECT_EQ(json["embed"]["outputs"]["embedding"]["layer"], "layers.8");
  EXPECT_FALSE(json["serving_default"]["outputs"]["classes"].contains("layer"));
}

// Each malformed signature names the file and where in it.
TEST(Signature, MalformedSignaturesNameTheFileAndThePlace) {
  struct Case {
    const char* json;
    const char* expected;
  };
  const Case cases[] = {
      {R"([])", "a mapping of names"},
      {R"({"s": {"inputs": {}}})", "s: expected {inputs"},
      {R"({"s": {"inputs": {}, "outputs": {}}})", "s: expected {inputs"},
      {R"({"s": {"inputs": {"x": {"dtype": "float8", "shape": [-1]}}, "outputs": {"y": {"dtype": "float32", "shape": [-1]}}}})",
       "s.inputs.x: unknown dtype \"float8\"; one of float32"},
      {R"({"s": {"inputs": {}, "outputs": {"y": {"dtype": "float32", "shape": [3]}}}})",
       "s.outputs.y: the first dimension is the batch's"},
      {R"({"s": {"inputs": {}, "outputs": {"y": {"dtype": "float32", "shape": [-1, -5]}}}})",
       "s.outputs.y: a shape holds sizes"},
      {R"({"s": {"inputs": {}, "outputs": {"y": {"dtype": "float32", "shape": [-1], "op": "cube"}}}})",
       "s.outputs.y: unknown op \"cube\"; one of identity, softmax"},
      {R"({"s": {"inputs": {}, "outputs": {"y": {"dtype": "float32", "shape": [-1], "from": 3}}}})",
       "s.outputs.y: from is a name"},
      {R"({"s": {"inputs": {"x": {"dtype": "float32", "shape": [-1, 1, 28, 28], "image": {"channels": 1, "height": 28, "width": 28, "layout": "hwc", "scale": 1}}}, "outputs": {"y": {"dtype": "float32", "shape": [-1]}}}})",
       "s.inputs.x: an image input of 28 by 28 pixels in 1 channels (hwc) has the shape [-1, 28, "
       "28, 1]"},
      {R"({"s": {"inputs": {"x": {"dtype": "float32", "shape": [-1, 3], "image": {"channels": 1}}}, "outputs": {"y": {"dtype": "float32", "shape": [-1]}}}})",
       "image input: \"height\""},
  };
  for (const Case& c : cases) {
    try {
      parse_signatures(Json::parse(c.json), "exports/m/1/model.yaml");
      ADD_FAILURE() << "no error for " << c.json;
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("exports/m/1/model.yaml")) << c.json;
      EXPECT_THAT(e.what(), HasSubstr(c.expected)) << c.json;
    }
  }
}

}  // namespace
}  // namespace kiln::serving
