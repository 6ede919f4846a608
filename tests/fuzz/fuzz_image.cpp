// PNG and JPEG bytes (image features of tf.Example records, image folders). The first byte picks
// the channels asked for (0 = the file's own, 1, 3 or 4); the rest is the file. A decoded image
// must hold height * width * channels bytes, and survive PNG encoding losslessly.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/core/error.h"
#include "kiln/io/image_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  constexpr int kChannels[] = {0, 1, 3, 4};
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  kiln::io::Image image;
  try {
    image = kiln::io::decode_image(bytes, kChannels[data[0] & 3], "fuzz.png");
  } catch (const kiln::Error&) {
    return 0;
  }
  bool sized =
      image.height > 0 && image.width > 0 &&
      static_cast<int64_t>(image.pixels.size()) == image.height * image.width * image.channels;
  // 2-channel images (grey + alpha) decode, but encode_png takes 1, 3 or 4 channels only. Large
  // images are left out: stb's PNG writer takes seconds on them under ASan, and the round trip
  // finds nothing that a small image does not.
  if (sized && image.channels != 2 && image.pixels.size() <= (size_t{1} << 20)) {
    kiln::io::Image again = kiln::io::decode_image(kiln::io::encode_png(image), 0, "again.png");
    sized = again.pixels == image.pixels && again.channels == image.channels;
  }
  if (!sized) {
    std::fprintf(stderr, "a decoded image has the wrong size or does not survive PNG encoding\n");
    std::abort();
  }
  return 0;
}
