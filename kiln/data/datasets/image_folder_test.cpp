#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/data/dataset.h"
#include "kiln/io/file_bytes.h"
#include "kiln/io/image_codec.h"
#include "kiln/io/image_input.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::data {
namespace image_folder_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::shared_ptr<Dataset> folder_dataset(const std::string& root, const std::string& extra = "") {
  return make_dataset("{type: image_folder, root: " + root + extra + "}");
}

void write_png(const testing::TempDir& dir, const std::string& name, int64_t h, int64_t w,
               uint8_t value) {
  fs::create_directories(fs::path(dir.file(name)).parent_path());
  dir.write(name, io::encode_png(io::Image{h, w, 1, std::vector<uint8_t>(size_t(h * w), value)}));
}

TEST(ImageFolderDataset, LoadsImagesChannelsFirstWithSortedClassLabels) {
  testing::TempDir dir;
  write_png(dir, "root/zebra/1.png", 2, 3, 255);
  write_png(dir, "root/ant/1.png", 2, 3, 51);
  write_png(dir, "root/ant/2.png", 2, 3, 0);
  auto rgb = folder_dataset(dir.file("root"));
  ASSERT_EQ(rgb->size(), 3);
  EXPECT_THAT(rgb->input_shape(), ElementsAre(3, 2, 3));
  Batch all = rgb->gather(torch::arange(3));
  EXPECT_TRUE(torch::equal(all.target, torch::tensor({0, 0, 1}, torch::kInt64)));
  EXPECT_FLOAT_EQ(all.input[0][2][1][2].item<float>(), 0.2f);
  EXPECT_FLOAT_EQ(all.input[2][0][0][0].item<float>(), 1.0f);
  EXPECT_THAT(folder_dataset(dir.file("root"), ", channels: 1")->input_shape(),
              ElementsAre(1, 2, 3));
  // Served images are decoded the same way: channels first, scaled to [0, 1].
  ASSERT_TRUE(rgb->info().image_input.has_value());
  EXPECT_TRUE(*rgb->info().image_input == (io::ImageInput{3, 2, 3, true, 1.0 / 255}));
  std::string png = io::read_file_bytes(dir.file("root/ant/1.png"));
  std::vector<double> served = io::image_input_values(png, *rgb->info().image_input, "1.png");
  torch::Tensor trained = all.input[0].reshape({-1}).to(torch::kFloat64);
  ASSERT_EQ(static_cast<int64_t>(served.size()), trained.numel());
  for (int64_t i = 0; i < trained.numel(); ++i)
    EXPECT_NEAR(served[size_t(i)], trained[i].item<double>(), 1e-7) << i;
}

TEST(ImageFolderDataset, ImagesOfAnotherSizeAreNamed) {
  testing::TempDir dir;
  write_png(dir, "root/a/1.png", 2, 3, 0);
  write_png(dir, "root/b/odd.png", 4, 4, 0);
  try {
    folder_dataset(dir.file("root"));
    FAIL() << "stacked images of two sizes";
  } catch (const DataError& e) {
    EXPECT_THAT(e.file(), HasSubstr("odd.png"));
    EXPECT_THAT(e.what(), HasSubstr("is 4x4, the first image 2x3"));
  }
  EXPECT_THROW(folder_dataset(dir.file("root"), ", channels: 2"), ConfigError);
}

}  // namespace image_folder_test
}  // namespace kiln::data
