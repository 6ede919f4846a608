#include "kiln/io/image_codec.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <cstdlib>

#include "kiln/core/error.h"
#include "kiln/io/file_bytes.h"

namespace kiln::io {
namespace {

using ::testing::HasSubstr;

// A 5x4 image whose every byte differs from its neighbours, so any reordering shows.
Image pattern(int64_t channels) {
  Image image{5, 4, channels, {}};
  for (int64_t i = 0; i < 5 * 4 * channels; ++i) image.pixels.push_back(uint8_t(i * 37 % 251));
  return image;
}

TEST(ImageCodec, PngRoundTripsEveryChannelCount) {
  for (int64_t channels : {1, 3, 4}) {
    Image original = pattern(channels);
    std::string png = encode_png(original);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    Image back = decode_image(png, 0, "pattern.png");
    EXPECT_EQ(back.height, 5);
    EXPECT_EQ(back.width, 4);
    EXPECT_EQ(back.channels, channels);
    EXPECT_EQ(back.pixels, original.pixels) << channels << " channels";
  }
}

TEST(ImageCodec, ConvertsChannelsWhenAsked) {
  Image gray = pattern(1);
  Image rgb = decode_image(encode_png(gray), 3, "gray.png");
  ASSERT_EQ(rgb.channels, 3);
  for (size_t i = 0; i < gray.pixels.size(); ++i) {
    EXPECT_EQ(rgb.pixels[3 * i], gray.pixels[i]);
    EXPECT_EQ(rgb.pixels[3 * i + 2], gray.pixels[i]);
  }
}

// A JPEG (written by stb) of one grey level in every channel.
std::string flat_jpeg(int height, int width, uint8_t value) {
  std::vector<uint8_t> pixels(size_t(height * width * 3), value);
  std::string jpeg;
  auto append = [](void* out, void* data, int size) {
    static_cast<std::string*>(out)->append(static_cast<const char*>(data), size_t(size));
  };
  EXPECT_TRUE(stbi_write_jpg_to_func(append, &jpeg, width, height, 3, pixels.data(), 95));
  return jpeg;
}

TEST(ImageCodec, DecodesJpegApproximately) {
  Image back = decode_image(flat_jpeg(8, 8, 200), 0, "flat.jpg");
  EXPECT_EQ(back.channels, 3);
  for (uint8_t v : back.pixels) EXPECT_NEAR(v, 200, 3);
}

TEST(ImageCodec, JpegDecodesToTheChannelsAskedFor) {
  std::string jpeg = flat_jpeg(16, 8, 90);
  for (int channels : {1, 2, 3, 4}) {
    Image back = decode_image(jpeg, channels, "flat.jpg");
    EXPECT_EQ(back.height, 16);
    EXPECT_EQ(back.width, 8);
    ASSERT_EQ(back.channels, channels);
    ASSERT_EQ(back.pixels.size(), size_t(16 * 8 * channels));
    EXPECT_NEAR(back.pixels[0], 90, 3);
    if (channels == 2 || channels == 4) {
      EXPECT_EQ(back.pixels[channels - 1], 255);  // opaque
    }
  }
  try {
    decode_image(jpeg.substr(0, jpeg.size() * 2 / 3), 0, "cut.jpg");
    ADD_FAILURE() << "decoded a JPEG cut short";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cut.jpg: cannot decode the JPEG image"));
  }
  EXPECT_THROW(decode_image("\xff\xd8\xff garbage", 0, "bad.jpg"), DataError);
  EXPECT_THROW(decode_image("GIF89a....", 0, "a.gif"), DataError);  // stb would decode it
}

TEST(ImageCodec, GarbageAndTruncatedFilesAreDataErrorsNamingTheSource) {
  std::string png = encode_png(pattern(3));
  for (const std::string& bad :
       {std::string("not an image"), png.substr(0, png.size() / 2), std::string()}) {
    try {
      decode_image(bad, 0, "data.tfrecord, record 3, feature image");
      ADD_FAILURE() << "decoded " << bad.size() << " bad bytes";
    } catch (const DataError& e) {
      EXPECT_THAT(e.what(), HasSubstr("record 3, feature image"));
    }
  }
}

// A PNG whose header claims 10000 x 10000 pixels (stb itself refuses only past 2^30 bytes):
// refused from the header, before 300 MB are allocated for it.
TEST(ImageCodec, DimensionsBeyondTheLimitAreRefusedBeforeDecoding) {
  std::string png = encode_png(pattern(3));
  for (int at : {16, 20}) {  // IHDR's width and height, big-endian
    png[at] = 0, png[at + 1] = 0, png[at + 2] = 0x27, png[at + 3] = 0x10;
  }
  try {
    decode_image(png, 0, "big.png");
    ADD_FAILURE() << "decoded a 10000x10000 image";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("big.png: the image says it is 10000x10000 pixels, more "
                                    "than kiln decodes (67108864 pixels)"));
  }
}

// Found by fuzzing: a PNG chunk claiming 442 MB in a 100-byte image made stb allocate 2 GiB for
// IDAT data it never had. Chunk lengths are checked against the bytes there are first.
TEST(ImageCodec, AChunkLongerThanTheImageIsRefusedBeforeDecoding) {
  std::string png = encode_png(pattern(3));
  std::string iend = png.substr(png.size() - 12);
  std::string claims_442_mb("\x1a\x60\x00\x00IDAT\x78\x9c\x60\x82", 12);
  std::string bad = png.substr(0, png.size() - 12) + claims_442_mb + iend;
  try {
    decode_image(bad, 0, "data.tfrecord, record 3, feature image");
    ADD_FAILURE() << "decoded a PNG with a chunk longer than itself";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(fmt::format(
                              "data.tfrecord, record 3, feature image: the PNG chunk \"IDAT\" at "
                              "byte {} of the image says it holds 442499072 bytes, but only 16 "
                              "follow its header",
                              png.size() - 12)));
  }
}

TEST(ImageCodec, ChunkTypesThatAreNotLettersAreShownAsBytes) {
  std::string png = encode_png(pattern(1));
  std::string bad =
      png.substr(0, png.size() - 12) + std::string("\x7f\x00\x00\x00ID\x01T\x00\x00\x00\x00", 12);
  try {
    decode_image(bad, 0, "x.png");
    ADD_FAILURE() << "decoded a cut chunk";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the PNG chunk \"ID\\x01T\""));
  }
}

}  // namespace
}  // namespace kiln::io
