#include "kiln/io/image_folder.h"

#include <stb_image.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "kiln/io/file_bytes.h"

namespace kiln::io {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> sorted_entries(const fs::path& dir, bool directories) {
  std::vector<fs::path> out;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error))
    if (directories ? it->is_directory()
                    : (it->is_regular_file() && is_image_file(it->path().string())))
      out.push_back(it->path());
  if (error) throw IoError("list", dir.string(), error.value());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool is_image_file(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

std::vector<std::string> image_files_in(const std::string& dir) {
  std::vector<std::string> files;
  for (const fs::path& file : sorted_entries(dir, false)) files.push_back(file.string());
  return files;
}

namespace {

std::string image_example(const ImageFolder& folder, const ImageFolder::Entry& entry) {
  std::string bytes = read_file_bytes(entry.path);
  int width = 0, height = 0, channels = 0;
  if (!stbi_info_from_memory(reinterpret_cast<const stbi_uc*>(bytes.data()),
                             static_cast<int>(bytes.size()), &width, &height, &channels))
    throw DataError(entry.path, -1, 0, "not a readable PNG or JPEG image");
  bool png = bytes.size() >= 4 && bytes.compare(1, 3, "PNG") == 0;
  Example e;
  e.features["image/encoded"] = bytes_feature({std::move(bytes)});
  e.features["image/format"] = bytes_feature({png ? "PNG" : "JPEG"});
  e.features["image/height"] = int64_feature({height});
  e.features["image/width"] = int64_feature({width});
  e.features["image/channels"] = int64_feature({channels});
  e.features["image/class/label"] = int64_feature({entry.label});
  e.features["image/class/text"] = bytes_feature({folder.classes[size_t(entry.label)]});
  e.features["image/filename"] = bytes_feature({fs::path(entry.path).filename().string()});
  return encode_example(e);
}

}  // namespace

ImageFolder scan_image_folder(const std::string& root) {
  ImageFolder folder;
  for (const fs::path& class_dir : sorted_entries(root, true)) {
    std::vector<fs::path> files = sorted_entries(class_dir, false);
    if (files.empty()) continue;
    auto label = static_cast<int64_t>(folder.classes.size());
    folder.classes.push_back(class_dir.filename().string());
    for (const fs::path& file : files) folder.images.push_back({file.string(), label});
  }
  if (folder.images.empty())
    throw Error(root + " holds no class folder with .png, .jpg or .jpeg images; expected " + root +
                "/<class name>/<image>");
  return folder;
}

void convert_image_folder(const ImageFolder& folder, uint64_t seed, ShardedTfRecordWriter& out,
                          const ConvertProgress& progress) {
  std::vector<ImageFolder::Entry> order = folder.images;
  // Fisher-Yates over a Mersenne twister: the same order on every platform (std::shuffle's
  // algorithm is the standard library's choice).
  std::mt19937_64 engine(seed);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[engine() % i]);
  auto total = static_cast<int64_t>(order.size());
  for (int64_t i = 0; i < total; ++i) {
    out.write(image_example(folder, order[size_t(i)]));
    if (progress) progress(i + 1, total);
  }
}

}  // namespace kiln::io
