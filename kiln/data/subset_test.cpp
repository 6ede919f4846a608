#include "kiln/data/subset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "kiln/io/idx.h"
#include "tests/support/components.h"
#include "tests/support/temp_dir.h"

namespace kiln::data {
namespace subset_test {

using ::testing::ElementsAre;

std::vector<int64_t> values(const torch::Tensor& t) {
  torch::Tensor c = t.contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

TEST(CarveIndices, SplitsEveryIndexIntoExactlyOnePart) {
  auto [kept, carved] = carve_indices(100, 0.2, 7);
  EXPECT_EQ(carved.size(0), 20);
  EXPECT_EQ(kept.size(0), 80);
  torch::Tensor all = std::get<0>(torch::cat({kept, carved}).sort());
  EXPECT_TRUE(torch::equal(all, torch::arange(100)));
  EXPECT_TRUE(torch::equal(carved, std::get<0>(carved.sort())));  // dataset order kept
}

TEST(CarveIndices, IsReproducibleFromTheSeedAndNotAPrefix) {
  EXPECT_TRUE(torch::equal(carve_indices(50, 0.3, 7).second, carve_indices(50, 0.3, 7).second));
  EXPECT_FALSE(torch::equal(carve_indices(50, 0.3, 7).second, carve_indices(50, 0.3, 8).second));
  EXPECT_FALSE(torch::equal(carve_indices(50, 0.3, 7).second, torch::arange(15)));
}

TEST(CarveIndices, RefusesToLeaveAnEmptySplit) {
  EXPECT_THROW(carve_indices(10, 0.01, 1), Error);
  EXPECT_THROW(carve_indices(1, 0.5, 1), Error);
}

TEST(SubsetDataset, GathersThroughItsIndices) {
  auto base = std::make_shared<TensorDataset>(torch::arange(10, torch::kFloat32).view({10, 1}),
                                              torch::arange(10));
  SubsetDataset subset(base, torch::tensor({7, 2, 5}, torch::kInt64));
  EXPECT_EQ(subset.size(), 3);
  EXPECT_THAT(subset.input_shape(), ElementsAre(1));
  EXPECT_THAT(values(subset.gather(torch::tensor({2, 0}, torch::kInt64)).target),
              ElementsAre(5, 7));
}

TEST(IdxDataset, ReadsChannelsLastImagesAsChannelsFirst) {
  testing::TempDir dir;
  io::IdxArray images{io::IdxType::kUint8, {2, 2, 3, 3}, {}};  // [N, H, W, C]
  for (int i = 0; i < 36; ++i) images.data.push_back(uint8_t(i));
  io::IdxArray labels{io::IdxType::kInt32, {2}, {}};
  for (int32_t label : {9, -1}) {
    auto bytes = reinterpret_cast<const uint8_t*>(&label);
    labels.data.insert(labels.data.end(), bytes, bytes + 4);
  }
  std::string yaml = "{type: idx, images: " + dir.write("i.idx", io::encode_idx(images)) +
                     ", labels: " + dir.write("l.idx", io::encode_idx(labels)) + "}";
  auto dataset = make_dataset(yaml);
  EXPECT_THAT(dataset->input_shape(), ElementsAre(3, 2, 3));
  Batch batch = dataset->gather(torch::tensor({1, 0}, torch::kInt64));
  EXPECT_THAT(values(batch.target), ElementsAre(-1, 9));
  // Image 1, channel 2, row 1, column 0 is byte 18 + (1 * 3 + 0) * 3 + 2 = 29.
  EXPECT_FLOAT_EQ(batch.input[0][2][1][0].item<float>(), 29.0f / 255.0f);
}

TEST(IdxDataset, MismatchedFilesAreDataErrors) {
  testing::TempDir dir;
  io::IdxArray floats{io::IdxType::kFloat32, {1, 2, 2}, std::vector<uint8_t>(16, 0)};
  std::string path = dir.write("f.idx", io::encode_idx(floats));
  try {
    make_dataset("{type: idx, images: " + path + ", labels: " + path + "}");
    FAIL() << "accepted float images";
  } catch (const DataError& e) {
    EXPECT_EQ(e.file(), path);
  }
  EXPECT_THROW(make_dataset("{type: idx, images: " + path + "}"), ConfigError);
}

}  // namespace subset_test
}  // namespace kiln::data
