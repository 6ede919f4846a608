#include "kiln/io/image_codec.h"

#include <stb_image.h>
#include <stb_image_write.h>
#include <turbojpeg.h>

#include <cctype>
#include <limits>
#include <memory>
#include <vector>

#include "kiln/core/error.h"

namespace kiln::io {
namespace {

struct StbFree {
  void operator()(stbi_uc* pixels) const { stbi_image_free(pixels); }
};

bool is_png(std::string_view bytes) {
  return bytes.substr(0, 8) == std::string_view("\x89PNG\r\n\x1a\n", 8);
}
bool is_jpeg(std::string_view bytes) {
  return bytes.substr(0, 3) == std::string_view("\xff\xd8\xff", 3);
}

// Dimensions from a header, checked before anything is allocated for them: a 100-byte file may
// claim 16 million by 16 million pixels.
void check_pixels(int64_t width, int64_t height, const std::string& name) {
  if (width * height > kMaxImagePixels)
    throw DataError(name, -1, -1,
                    fmt::format("the image says it is {}x{} pixels, more than kiln decodes ({} "
                                "pixels)",
                                width, height, kMaxImagePixels));
}

uint32_t big_endian(std::string_view bytes) {
  uint32_t value = 0;
  for (unsigned char byte : bytes.substr(0, 4)) value = value << 8 | byte;
  return value;
}

// A chunk type as text: its four letters, or \xNN for a byte that is not one.
std::string show_chunk_type(std::string_view type) {
  std::string shown;
  for (unsigned char byte : type)
    shown += std::isalpha(byte) ? std::string(1, static_cast<char>(byte))
                                : fmt::format("\\x{:02x}", byte);
  return shown;
}

// Walks the chunks, each (length, type, data, CRC), up to IEND: stb grows its buffer for IDAT data
// to the length a chunk claims before it reads the data, so a 100-byte file claiming 400 MB of
// IDAT would have it allocate 512 MB, and more for each such chunk. Damage of other kinds is left
// to stb.
void check_png_chunks(std::string_view bytes, const std::string& name) {
  constexpr size_t kSignature = 8, kHeader = 8, kCrc = 4;
  for (size_t at = kSignature; at + kHeader + kCrc <= bytes.size();) {
    uint64_t length = big_endian(bytes.substr(at, 4));
    std::string_view type = bytes.substr(at + 4, 4);
    size_t after_header = bytes.size() - at - kHeader;
    if (length + kCrc > after_header)
      throw DataError(name, -1, -1,
                      fmt::format("the PNG chunk \"{}\" at byte {} of the image says it holds {} "
                                  "bytes, but only {} follow its header",
                                  show_chunk_type(type), at, length, after_header));
    if (type == "IEND") return;
    at += kHeader + length + kCrc;
  }
}

Image decode_png(std::string_view bytes, int channels, const std::string& name) {
  check_png_chunks(bytes, name);
  auto data = reinterpret_cast<const stbi_uc*>(bytes.data());
  int size = static_cast<int>(bytes.size()), width = 0, height = 0, file_channels = 0;
  if (stbi_info_from_memory(data, size, &width, &height, &file_channels))
    check_pixels(width, height, name);
  std::unique_ptr<stbi_uc, StbFree> pixels(
      stbi_load_from_memory(data, size, &width, &height, &file_channels, channels));
  if (!pixels)
    throw DataError(name, -1, -1,
                    std::string("cannot decode the PNG image: ") + stbi_failure_reason());
  Image image{height, width, channels ? channels : file_channels, {}};
  image.pixels.assign(pixels.get(), pixels.get() + image.height * image.width * image.channels);
  return image;
}

struct TurboJpegFree {
  void operator()(void* handle) const { tjDestroy(handle); }
};

// JPEG through libjpeg-turbo, as TensorFlow's decode_jpeg does (accurate DCT, fancy upsampling):
// stb's JPEG decoder reads uninitialized memory on some damaged files (fuzzing found crashes that
// depend on what the heap held before).
Image decode_jpeg(std::string_view bytes, int channels, const std::string& name) {
  std::unique_ptr<void, TurboJpegFree> handle(tjInitDecompress());
  KILN_ASSERT(handle != nullptr);
  auto data = reinterpret_cast<const unsigned char*>(bytes.data());
  auto size = static_cast<unsigned long>(bytes.size());
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  auto fail = [&] {
    return DataError(name, -1, -1,
                     std::string("cannot decode the JPEG image: ") + tjGetErrorStr2(handle.get()));
  };
  if (tjDecompressHeader3(handle.get(), data, size, &width, &height, &subsampling, &colorspace))
    throw fail();
  check_pixels(width, height, name);
  int file_channels = colorspace == TJCS_GRAY ? 1 : 3;
  int wanted = channels ? channels : file_channels;
  // Grey and alpha (2 channels) is decoded as grey, then given an opaque alpha.
  int decoded = wanted == 2 ? 1 : wanted;
  TJPF format = decoded == 1 ? TJPF_GRAY : decoded == 3 ? TJPF_RGB : TJPF_RGBA;
  std::vector<uint8_t> pixels(static_cast<size_t>(width) * height * decoded);
  // A file cut short is an error (TensorFlow's decode_jpeg too, unless asked to recover); other
  // warnings (extraneous bytes before a marker) still give the whole image.
  if (tjDecompress2(handle.get(), data, size, pixels.data(), width, 0, height, format, 0) != 0 &&
      (tjGetErrorCode(handle.get()) != TJERR_WARNING ||
       std::string_view(tjGetErrorStr2(handle.get())).find("Premature end") !=
           std::string_view::npos))
    throw fail();
  Image image{height, width, wanted, {}};
  if (wanted != 2) {
    image.pixels = std::move(pixels);
    return image;
  }
  image.pixels.reserve(pixels.size() * 2);
  for (uint8_t grey : pixels) image.pixels.insert(image.pixels.end(), {grey, 255});
  return image;
}

}  // namespace

Image decode_image(std::string_view bytes, int channels, const std::string& name) {
  KILN_ASSERT(channels >= 0 && channels <= 4);
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw DataError(name, -1, -1,
                    fmt::format("an image of {} bytes is more than kiln decodes", bytes.size()));
  if (is_png(bytes)) return decode_png(bytes, channels, name);
  if (is_jpeg(bytes)) return decode_jpeg(bytes, channels, name);
  throw DataError(name, -1, -1,
                  "cannot decode the image: not PNG or JPEG (their first bytes are 89 50 4e 47 "
                  "and ff d8 ff)");
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
