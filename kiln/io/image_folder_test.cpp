#include "kiln/io/image_folder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stb_image_write.h>

#include <filesystem>
#include <map>

#include "kiln/core/error.h"
#include "kiln/io/example.h"
#include "kiln/io/image_codec.h"
#include "tests/support/temp_dir.h"

namespace kiln::io {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string jpeg_bytes() {
  std::vector<uint8_t> pixels(4 * 2 * 3, 90);
  std::string out;
  auto append = [](void* o, void* data, int size) {
    static_cast<std::string*>(o)->append(static_cast<const char*>(data), size_t(size));
  };
  stbi_write_jpg_to_func(append, &out, 4, 2, 3, pixels.data(), 90);
  return out;
}

// root/cat/{a.png, b.PNG}, root/dog/{c.jpg, notes.txt}, root/empty/
std::string make_folder(const testing::TempDir& dir) {
  for (const char* sub : {"pets/cat", "pets/dog", "pets/empty"})
    fs::create_directories(dir.file(sub));
  std::string png = encode_png(Image{3, 5, 1, std::vector<uint8_t>(15, 7)});
  dir.write("pets/cat/a.png", png);
  dir.write("pets/cat/b.PNG", png);
  dir.write("pets/dog/c.jpg", jpeg_bytes());
  dir.write("pets/dog/notes.txt", "not an image");
  return dir.file("pets");
}

TEST(ImageFolder, NumbersClassesInSortedOrderAndSkipsOtherFiles) {
  testing::TempDir dir;
  ImageFolder folder = scan_image_folder(make_folder(dir));
  EXPECT_THAT(folder.classes, ElementsAre("cat", "dog"));
  ASSERT_EQ(folder.images.size(), 3u);
  EXPECT_THAT(folder.images[1].path, HasSubstr("cat/b.PNG"));
  EXPECT_EQ(folder.images[2].label, 1);
}

TEST(ImageFolder, ConvertsWithTheFeatureNamesOfTensorFlowsConverters) {
  testing::TempDir dir;
  ImageFolder folder = scan_image_folder(make_folder(dir));
  ShardedTfRecordWriter out(dir.file("out"), 1, Compression::kNone);
  convert_image_folder(folder, 3, out);
  out.close();
  TfRecordReader reader(out.paths()[0]);
  std::map<std::string, Features> by_file;
  std::string record;
  while (reader.next(record)) {
    Features f = parse_example(record).features;
    by_file[f.at("image/filename").bytes.at(0)] = f;
  }
  ASSERT_EQ(by_file.size(), 3u);
  const Features& jpeg = by_file.at("c.jpg");
  EXPECT_EQ(jpeg.at("image/format"), bytes_feature({"JPEG"}));
  EXPECT_EQ(jpeg.at("image/class/label"), int64_feature({1}));
  EXPECT_EQ(jpeg.at("image/class/text"), bytes_feature({"dog"}));
  EXPECT_EQ(jpeg.at("image/width"), int64_feature({4}));
  const Features& png = by_file.at("a.png");
  EXPECT_EQ(png.at("image/height"), int64_feature({3}));
  EXPECT_EQ(png.at("image/channels"), int64_feature({1}));
  Image decoded = decode_image(png.at("image/encoded").bytes.at(0), 0, "a.png");
  EXPECT_EQ(decoded.pixels, std::vector<uint8_t>(15, 7));
}

TEST(ImageFolder, ABrokenImageIsADataErrorNamingIt) {
  testing::TempDir dir;
  std::string root = make_folder(dir);
  std::string broken = dir.write("pets/dog/broken.png", "\x89PNG but not really");
  ShardedTfRecordWriter out(dir.file("out"), 1, Compression::kNone);
  try {
    convert_image_folder(scan_image_folder(root), 1, out);
    FAIL() << "converted a broken PNG";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), broken);
  }
}

TEST(ImageFolder, AFolderWithoutImagesOrThatIsMissingIsAnError) {
  testing::TempDir dir;
  fs::create_directories(dir.file("nothing/cls"));
  EXPECT_THROW(scan_image_folder(dir.file("nothing")), Error);
  EXPECT_THROW(scan_image_folder(dir.file("absent")), IoError);
}

}  // namespace
}  // namespace kiln::io
