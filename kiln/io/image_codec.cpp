#include "kiln/io/image_codec.h"

#include <stb_image.h>
#include <stb_image_write.h>

#include <limits>
#include <memory>

#include "kiln/core/error.h"

namespace kiln::io {
namespace {

struct StbFree {
  void operator()(stbi_uc* pixels) const { stbi_image_free(pixels); }
};

// The header's dimensions, checked before stb allocates for them: a 100-byte PNG may claim
// 16 million by 16 million pixels.
void check_dimensions(std::string_view bytes, const std::string& name) {
  // stb decodes a dozen formats; kiln promises PNG and JPEG, and reaches no other decoder.
  bool png = bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8);
  bool jpeg = bytes.substr(0, 3) == std::string_view("\xff\xd8\xff", 3);
  if (!png && !jpeg)
    throw DataError(name, -1, -1,
                    "cannot decode the image: not PNG or JPEG (their first bytes are 89 50 4e 47 "
                    "and ff d8 ff)");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw DataError(name, -1, -1,
                    fmt::format("an image of {} bytes is more than kiln decodes", bytes.size()));
  int width = 0, height = 0, file_channels = 0;
  if (!stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                             static_cast<int>(bytes.size()), &width, &height, &file_channels))
    return;  // not an image stb recognises: decoding says why
  if (static_cast<int64_t>(width) * height > kMaxImagePixels)
    throw DataError(name, -1, -1,
                    fmt::format("the image says it is {}x{} pixels, more than kiln decodes ({} "
                                "pixels)",
                                width, height, kMaxImagePixels));
}

}  // namespace

Image decode_image(std::string_view bytes, int channels, const std::string& name) {
  KILN_ASSERT(channels >= 0 && channels <= 4);
  check_dimensions(bytes, name);
  int width = 0, height = 0, file_channels = 0;
  std::unique_ptr<stbi_uc, StbFree> pixels(stbi_load_from_memory(
      reinterpret_cast<const stbi_uc*>(bytes.data()), static_cast<int>(bytes.size()), &width,
      &height, &file_channels, channels));
  if (!pixels)
    throw DataError(
        name, -1, -1,
        std::string("cannot decode the image (PNG or JPEG expected): ") + stbi_failure_reason());
  Image image{height, width, channels ? channels : file_channels, {}};
  const stbi_uc* data = pixels.get();
  image.pixels.assign(data, data + image.height * image.width * image.channels);
  return image;
}

std::string encode_png(const Image& image) {
  KILN_ASSERT(image.channels == 1 || image.channels == 3 || image.channels == 4);
  KILN_ASSERT(static_cast<int64_t>(image.pixels.size()) ==
              image.height * image.width * image.channels);
  std::string out;
  auto append = [](void* context, void* data, int size) {
    static_cast<std::string*>(context)->append(static_cast<const char*>(data),
                                               static_cast<size_t>(size));
  };
  int ok =
      stbi_write_png_to_func(append, &out, static_cast<int>(image.width),
                             static_cast<int>(image.height), static_cast<int>(image.channels),
                             image.pixels.data(), static_cast<int>(image.width * image.channels));
  if (!ok) throw InternalError("stb could not encode a PNG");
  return out;
}

}  // namespace kiln::io
