#include "kiln/io/image_input.h"

#include <fmt/format.h>

#include "kiln/core/error.h"
#include "kiln/io/image_codec.h"

namespace kiln::io {

std::vector<int64_t> ImageInput::shape() const {
  return channels_first ? std::vector<int64_t>{channels, height, width}
                        : std::vector<int64_t>{height, width, channels};
}

bool ImageInput::operator==(const ImageInput& other) const {
  return channels == other.channels && height == other.height && width == other.width &&
         channels_first == other.channels_first && scale == other.scale;
}

Json image_input_json(const ImageInput& image) {
  return {{"channels", image.channels},
          {"height", image.height},
          {"width", image.width},
          {"layout", image.channels_first ? "chw" : "hwc"},
          {"scale", image.scale}};
}

ImageInput parse_image_input(const Json& json, const std::string& file) {
  auto fail = [&](const std::string& problem) -> ImageInput {
    throw DataError(file, -1, -1, "image input: " + problem + ", in " + show_value(json));
  };
  auto size = [&](const char* key, int64_t most) {
    if (!json.contains(key) || !json[key].is_number_integer() || json[key].get<int64_t>() < 1 ||
        json[key].get<int64_t>() > most)
      fail(fmt::format("\"{}\" is a whole number from 1 to {}", key, most));
    return json[key].get<int64_t>();
  };
  if (!json.is_object()) return fail("expected an object");
  ImageInput image;
  image.channels = size("channels", 4);
  if (image.channels == 2) return fail("\"channels\" is 1, 3 or 4");
  image.height = size("height", kMaxImagePixels);
  image.width = size("width", kMaxImagePixels / image.height);
  const Json& given = json.value("layout", Json());  // not value(key, ""): a number would throw
  std::string layout = given.is_string() ? given.get<std::string>() : "";
  if (layout != "chw" && layout != "hwc") return fail("\"layout\" is chw or hwc");
  image.channels_first = layout == "chw";
  if (!json.contains("scale") || !json["scale"].is_number() || !(json["scale"].get<double>() > 0))
    return fail("\"scale\" is a positive number");
  image.scale = json["scale"].get<double>();
  return image;
}

std::vector<double> image_input_values(std::string_view bytes, const ImageInput& image,
                                       const std::string& name) {
  Image decoded = decode_image(bytes, static_cast<int>(image.channels), name);
  if (decoded.height != image.height || decoded.width != image.width)
    throw DataError(name, -1, -1,
                    fmt::format("is a {}x{} image; the model takes {}x{} (height x width)",
                                decoded.height, decoded.width, image.height, image.width));
  std::vector<double> values(decoded.pixels.size());
  int64_t plane = image.height * image.width;
  for (int64_t pixel = 0; pixel < plane; ++pixel)
    for (int64_t channel = 0; channel < image.channels; ++channel) {
      double value = decoded.pixels[size_t(pixel * image.channels + channel)] * image.scale;
      size_t at = image.channels_first ? size_t(channel * plane + pixel)
                                       : size_t(pixel * image.channels + channel);
      values[at] = value;
    }
  return values;
}

}  // namespace kiln::io
