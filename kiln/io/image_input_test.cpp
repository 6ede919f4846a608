#include "kiln/io/image_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/io/image_codec.h"

namespace kiln::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A 1x2 RGB image: pixel 0 is (10, 20, 30), pixel 1 (40, 50, 60).
std::string two_pixel_png() {
  Image image;
  image.height = 1;
  image.width = 2;
  image.channels = 3;
  image.pixels = {10, 20, 30, 40, 50, 60};
  return encode_png(image);
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no DataError";
  return "";
}

TEST(ImageInput, ChannelsFirstPutsEachChannelsPlaneTogetherAndScales) {
  ImageInput chw{3, 1, 2, true, 0.5};
  EXPECT_THAT(image_input_values(two_pixel_png(), chw, "x.png"),
              ElementsAre(5, 20, 10, 25, 15, 30));
  EXPECT_THAT(chw.shape(), ElementsAre(3, 1, 2));
}

TEST(ImageInput, ChannelsLastKeepsTheFilesOrder) {
  ImageInput hwc{3, 1, 2, false, 1.0};
  EXPECT_THAT(image_input_values(two_pixel_png(), hwc, "x.png"),
              ElementsAre(10, 20, 30, 40, 50, 60));
  EXPECT_THAT(hwc.shape(), ElementsAre(1, 2, 3));
}

TEST(ImageInput, AColourImageIsMadeGreyForAOneChannelInput) {
  ImageInput grey{1, 1, 2, true, 1.0};
  std::vector<double> values = image_input_values(two_pixel_png(), grey, "x.png");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_GT(values[0], 10);
  EXPECT_LT(values[0], 30);
}

TEST(ImageInput, AnImageOfAnotherSizeIsNamedWithBothSizes) {
  ImageInput square{3, 2, 2, true, 1.0};
  EXPECT_THAT(error_of([&] { image_input_values(two_pixel_png(), square, "cat.png"); }),
              HasSubstr("cat.png: is a 1x2 image; the model takes 2x2"));
}

TEST(ImageInput, BytesThatAreNoImageAreNamed) {
  ImageInput any{1, 1, 2, true, 1.0};
  EXPECT_THAT(error_of([&] { image_input_values("not an image", any, "input 'x' image 3"); }),
              HasSubstr("input 'x' image 3"));
}

TEST(ImageInput, JsonRoundTrips) {
  ImageInput image{3, 32, 24, false, 0.25};
  Json json = image_input_json(image);
  EXPECT_EQ(json["layout"], "hwc");
  EXPECT_TRUE(parse_image_input(json, "model.yaml") == image);
}

TEST(ImageInput, MalformedJsonNamesTheFileAndTheKey) {
  Json good = image_input_json({1, 28, 28, true, 1.0 / 255});
  auto broken = [&](const char* key, Json value) {
    Json json = good;
    json[key] = value;
    return error_of([&] { parse_image_input(json, "v/1/model.yaml"); });
  };
  EXPECT_THAT(broken("channels", 2), HasSubstr("\"channels\" is 1, 3 or 4"));
  EXPECT_THAT(broken("channels", 5), HasSubstr("\"channels\" is a whole number from 1 to 4"));
  EXPECT_THAT(broken("height", -3), HasSubstr("\"height\""));
  EXPECT_THAT(broken("width", "wide"), HasSubstr("\"width\""));
  EXPECT_THAT(broken("layout", "nchw"), HasSubstr("\"layout\" is chw or hwc"));
  // fuzz_signatures: a number as the layout threw nlohmann's type_error (exit 3).
  EXPECT_THAT(broken("layout", 62745098), HasSubstr("\"layout\" is chw or hwc"));
  EXPECT_THAT(broken("scale", 0), HasSubstr("\"scale\" is a positive number"));
  EXPECT_THAT(error_of([&] { parse_image_input(Json::array(), "v/1/model.yaml"); }),
              HasSubstr("v/1/model.yaml"));
  // Sizes whose product passes what decode_image takes are refused before any use.
  Json huge = good;
  huge["height"] = int64_t{1} << 20;
  huge["width"] = int64_t{1} << 20;
  EXPECT_THAT(error_of([&] { parse_image_input(huge, "m.yaml"); }), HasSubstr("\"width\""));
}

}  // namespace
}  // namespace kiln::io
