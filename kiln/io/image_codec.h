#pragma once
// PNG and JPEG decoding and PNG encoding of 8-bit images (PNG: stb, Debian's libstb; JPEG:
// libjpeg-turbo, as TensorFlow decodes it), for image features of tf.Example records, image
// folders, TensorBoard image summaries and converters. Pixels are row-major, channels last
// (H, W, C), as every image file stores them.
// Thread-safety: pure functions (each call has its own decoder state).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::io {

struct Image {
  int64_t height = 0, width = 0, channels = 0;
  std::vector<uint8_t> pixels;  // height * width * channels bytes
};

/// Decodes PNG or JPEG bytes (the format is read from the data). `channels` 0 keeps the file's
/// own; 1, 3 or 4 converts. Throws DataError naming `name` for anything stb cannot decode.
Image decode_image(std::string_view bytes, int channels, const std::string& name);

/// The most pixels decode_image decodes (2^26, e.g. 8192 x 8192): checked against the header
/// before any pixel is allocated.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;

/// PNG bytes of an image with 1, 3 or 4 channels.
std::string encode_png(const Image& image);

}  // namespace kiln::io
