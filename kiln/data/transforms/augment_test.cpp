// The random image augmentations: each is checked at its identity settings, at settings whose
// outcome is certain, and for the statistics of its draws; the loader test at the end checks
// that a batch's augmentation depends on (seed, epoch, batch) only.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>

#include "kiln/core/error.h"
#include "kiln/data/loader.h"
#include "tests/support/components.h"

namespace kiln::data {
namespace augment_test {

using ::testing::HasSubstr;

// [count, 1, size, size] images whose pixel (r, c) holds r * size + c + 1, so any window or shift
// of an image can be recognised, and padding (zeros) told apart from pixels.
torch::Tensor numbered_images(int64_t count, int64_t size) {
  torch::Tensor one = torch::arange(1, size * size + 1, torch::kFloat32).view({1, 1, size, size});
  return one.expand({count, 1, size, size}).contiguous();
}

// The (dy, dx) in [-reach, reach]^2 for which `out` is `image` shifted down by dy and right by dx
// (zeros coming in), or nothing.
std::optional<std::pair<int64_t, int64_t>> find_shift(const torch::Tensor& out,
                                                      const torch::Tensor& image, int64_t reach) {
  torch::Tensor padded = torch::constant_pad_nd(image, {reach, reach, reach, reach}, 0);
  int64_t h = image.size(1), w = image.size(2);
  for (int64_t dy = -reach; dy <= reach; ++dy)
    for (int64_t dx = -reach; dx <= reach; ++dx)
      if (torch::equal(out, padded.narrow(1, reach - dy, h).narrow(2, reach - dx, w)))
        return std::make_pair(dy, dx);
  return std::nullopt;
}

torch::Tensor apply_with_seed(const Transform& t, const torch::Tensor& x, uint64_t seed) {
  at::Generator rng = batch_generator(seed, 0, 0);
  return t.apply(x, rng);
}

TEST(RandomFlip, ProbabilityOneMirrorsEveryImageAndZeroNone) {
  torch::Tensor x = numbered_images(4, 5);
  EXPECT_TRUE(torch::equal(make_transform("{type: random_flip, p: 1}")->apply(x), x.flip({3})));
  EXPECT_TRUE(torch::equal(make_transform("{type: random_flip, p: 1, axis: vertical}")->apply(x),
                           x.flip({2})));
  EXPECT_TRUE(torch::equal(make_transform("{type: random_flip, p: 0}")->apply(x), x));
}

TEST(RandomFlip, FlipsAboutTheGivenFractionOfImages) {
  torch::Tensor x = numbered_images(2000, 3);
  torch::Tensor y = make_transform("{type: random_flip, p: 0.3}")->apply(x);
  int64_t flipped = 0;
  for (int64_t i = 0; i < x.size(0); ++i) {
    bool same = torch::equal(y[i], x[i]);
    EXPECT_TRUE(same || torch::equal(y[i], x[i].flip({2})));
    flipped += same ? 0 : 1;
  }
  EXPECT_NEAR(static_cast<double>(flipped) / 2000, 0.3, 0.04);
}

TEST(RandomFlip, RejectsABatchThatIsNotImages) {
  try {
    make_transform("{type: random_flip}")->apply(torch::zeros({8, 3}));
    FAIL() << "flipped a [8, 3] batch";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("random_flip"));
    EXPECT_THAT(e.what(), HasSubstr("[B, C, H, W]"));
    EXPECT_THAT(e.what(), HasSubstr("[8, 3]"));
  }
}

TEST(RandomCrop, FullSizeWithoutPaddingIsTheIdentity) {
  torch::Tensor x = numbered_images(3, 6);
  EXPECT_TRUE(torch::equal(make_transform("{type: random_crop, size: 6}")->apply(x), x));
}

TEST(RandomCrop, EveryOutputIsAWindowOfThePaddedImageAndOffsetsVary) {
  torch::Tensor x = numbered_images(200, 6);
  torch::Tensor y = make_transform("{type: random_crop, size: 6, padding: 2}")->apply(x);
  ASSERT_EQ(y.sizes(), x.sizes());
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < x.size(0); ++i) {
    auto shift = find_shift(y[i], x[i], 2);
    ASSERT_TRUE(shift.has_value()) << "image " << i << " is no window of the padded image";
    seen.insert(*shift);
  }
  EXPECT_EQ(seen.size(), 25u) << "some of the 5 x 5 offsets never came up in 200 draws";
}

TEST(RandomCrop, ASmallerWindowHasTheRequestedSize) {
  torch::Tensor y = make_transform("{type: random_crop, size: 4}")->apply(numbered_images(3, 6));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 1, 4, 4}));
}

TEST(RandomCrop, AWindowLargerThanThePaddedImageIsAnError) {
  try {
    make_transform("{type: random_crop, size: 9, padding: 1}")->apply(numbered_images(1, 6));
    FAIL() << "cropped 9 out of 8";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("window of 9"));
    EXPECT_THAT(e.what(), HasSubstr("6x6 padded by 1"));
  }
  EXPECT_THROW(make_transform("{type: random_crop}"), ConfigError) << "size is required";
}

TEST(RandomTranslate, ZeroShiftIsTheIdentity) {
  torch::Tensor x = numbered_images(3, 5);
  EXPECT_TRUE(torch::equal(make_transform("{type: random_translate, max: 0}")->apply(x), x));
}

TEST(RandomTranslate, ShiftsEachImageByAtMostMax) {
  torch::Tensor x = numbered_images(300, 7);
  torch::Tensor y = make_transform("{type: random_translate, max: 2}")->apply(x);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t i = 0; i < x.size(0); ++i) {
    auto shift = find_shift(y[i], x[i], 2);
    ASSERT_TRUE(shift.has_value()) << "image " << i << " is not a shift of at most 2";
    seen.insert(*shift);
  }
  EXPECT_EQ(seen.size(), 25u);
}

TEST(GaussianNoise, HasTheRequestedStandardDeviation) {
  torch::Tensor x = torch::full({100, 1, 20, 20}, 3.0f);
  torch::Tensor noise = make_transform("{type: gaussian_noise, std: 0.5}")->apply(x) - x;
  EXPECT_NEAR(noise.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(noise.std().item<double>(), 0.5, 0.01);
  EXPECT_TRUE(torch::equal(make_transform("{type: gaussian_noise, std: 0}")->apply(x), x));
}

TEST(GaussianNoise, RejectsIntegerInputsNamingTheFix) {
  try {
    make_transform("{type: gaussian_noise}")->apply(torch::zeros({2, 3}, torch::kUInt8));
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("add a cast"));
  }
}

TEST(RandomErasing, ErasesOneRectangleOfTheRequestedArea) {
  torch::Tensor x = torch::ones({50, 2, 8, 8});
  auto erasing = make_transform("{type: random_erasing, p: 1, scale: [0.25, 0.25], ratio: [1, 1]}");
  torch::Tensor y = erasing->apply(x);
  for (int64_t i = 0; i < x.size(0); ++i) {
    torch::Tensor zeros = (y[i][0] == 0);
    ASSERT_EQ(zeros.sum().item<int64_t>(), 16) << "image " << i;
    // The 16 zeros form a 4 x 4 block: 4 rows and 4 columns hold them, 4 each.
    EXPECT_EQ((zeros.sum(1) == 4).sum().item<int64_t>(), 4);
    EXPECT_EQ((zeros.sum(0) == 4).sum().item<int64_t>(), 4);
    EXPECT_TRUE(torch::equal(y[i][0], y[i][1])) << "channels were erased differently";
  }
}

TEST(RandomErasing, ProbabilityZeroLeavesImagesAndValueIsWritten) {
  torch::Tensor x = torch::ones({10, 1, 8, 8});
  EXPECT_TRUE(torch::equal(make_transform("{type: random_erasing, p: 0}")->apply(x), x));
  torch::Tensor y = make_transform("{type: random_erasing, p: 1, value: -3}")->apply(x);
  EXPECT_GT((y == -3).sum().item<int64_t>(), 0);
  EXPECT_TRUE(((y == 1) | (y == -3)).all().item<bool>());
  EXPECT_THROW(make_transform("{type: random_erasing, scale: [0.5, 0.2]}"), ConfigError);
}

TEST(RandomRotation, ZeroDegreesIsTheIdentity) {
  torch::Tensor x = numbered_images(3, 5);
  EXPECT_TRUE(torch::equal(make_transform("{type: random_rotation, degrees: 0}")->apply(x), x));
}

TEST(RandomRotation, KeepsTheCentreAndTheMassOfACentredBlob) {
  // A Gaussian blob in the middle of an odd-sized image: any rotation keeps it in place, so its
  // centre pixel and total stay put (up to bilinear smoothing) while the angle varies.
  torch::Tensor r = torch::arange(-10, 11, torch::kFloat32);
  torch::Tensor blob = torch::exp(-(r.view({-1, 1}).pow(2) + r.view({1, -1}).pow(2)) / 8);
  torch::Tensor x = blob.expand({16, 1, 21, 21}).contiguous();
  torch::Tensor y = make_transform("{type: random_rotation, degrees: 180}")->apply(x);
  EXPECT_TRUE(torch::allclose(y.sum({1, 2, 3}), x.sum({1, 2, 3}), 0.02));
  EXPECT_TRUE(torch::allclose(y.select(2, 10).select(2, 10), torch::ones({16, 1}), 0.02));
}

TEST(RandomRotation, RotatesAnOffCentreDotByDifferentAnglesPerImage) {
  torch::Tensor x = torch::zeros({8, 1, 21, 21});
  x.select(2, 10).select(2, 18).fill_(1);  // 8 pixels right of the centre
  torch::Tensor y = make_transform("{type: random_rotation, degrees: 90}")->apply(x);
  std::set<int64_t> brightest;
  for (int64_t i = 0; i < 8; ++i) {
    int64_t at = y[i][0].argmax().item<int64_t>();
    int64_t row = at / 21 - 10, col = at % 21 - 10;
    EXPECT_NEAR(std::hypot(row, col), 8.0, 1.0) << "image " << i << " moved off the circle";
    EXPECT_GE(col, 0) << "a rotation of at most 90 degrees left the right half";
    brightest.insert(at);
  }
  EXPECT_GT(brightest.size(), 4u);
}

TEST(Resize, ScalesToTheRequestedSize) {
  torch::Tensor x = torch::full({2, 3, 8, 8}, 0.25f);
  torch::Tensor y = make_transform("{type: resize, size: [16, 20]}")->apply(x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 16, 20}));
  EXPECT_TRUE(torch::allclose(y, torch::full({2, 3, 16, 20}, 0.25f)));
}

TEST(Resize, NearestDoublingRepeatsPixelsAndIntegersStayIntegers) {
  torch::Tensor x = torch::tensor({1, 2, 3, 4}, torch::kUInt8).view({1, 1, 2, 2});
  torch::Tensor y = make_transform("{type: resize, size: 4, mode: nearest}")->apply(x);
  ASSERT_EQ(y.scalar_type(), torch::kUInt8);
  torch::Tensor expected =
      torch::tensor({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, torch::kUInt8)
          .view({1, 1, 4, 4});
  EXPECT_TRUE(torch::equal(y, expected));
  EXPECT_THROW(make_transform("{type: resize, size: [1, 2, 3]}"), ConfigError);
  EXPECT_THROW(make_transform("{type: resize, size: 4, mode: lanczos}"), ConfigError);
}

TEST(Cast, ConvertsAndScales) {
  torch::Tensor x = torch::tensor({0, 51, 255}, torch::kUInt8);
  torch::Tensor y =
      make_transform("{type: cast, dtype: float32, scale: 0.00392156862745098}")->apply(x);
  ASSERT_EQ(y.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::allclose(y, torch::tensor({0.0f, 0.2f, 1.0f})));
  EXPECT_EQ(make_transform("{type: cast, dtype: int64}")->apply(x).scalar_type(), torch::kInt64);
  EXPECT_THROW(make_transform("{type: cast, dtype: float8}"), ConfigError);
}

TEST(BatchSeed, DiffersForNeighbouringBatchesEpochsAndSeeds) {
  std::set<uint64_t> seeds;
  for (uint64_t seed = 0; seed < 3; ++seed)
    for (int64_t epoch = 0; epoch < 3; ++epoch)
      for (int64_t batch = 0; batch < 3; ++batch) seeds.insert(batch_seed(seed, epoch, batch));
  EXPECT_EQ(seeds.size(), 27u);
  auto flip = make_transform("{type: random_flip}");
  torch::Tensor x = numbered_images(64, 3);
  EXPECT_TRUE(torch::equal(apply_with_seed(*flip, x, 5), apply_with_seed(*flip, x, 5)));
  EXPECT_FALSE(torch::equal(apply_with_seed(*flip, x, 5), apply_with_seed(*flip, x, 6)));
}

// Every batch of an epoch, flattened.
std::vector<torch::Tensor> epoch_inputs(Loader& loader, int64_t epoch) {
  loader.start_epoch(epoch);
  std::vector<torch::Tensor> inputs;
  while (auto batch = loader.next()) inputs.push_back(batch->input);
  return inputs;
}

TEST(Loader, AugmentsABatchTheSameWayForTheSameSeedEpochAndBatch) {
  auto dataset = std::make_shared<TensorDataset>(numbered_images(64, 4), torch::zeros({64}));
  std::vector<std::shared_ptr<const Transform>> transforms = {
      make_transform("{type: random_crop, size: 4, padding: 1}")};
  Loader first(dataset, transforms, {16, true, false, 9});
  Loader second(dataset, transforms, {16, true, false, 9});
  std::vector<torch::Tensor> epoch1 = epoch_inputs(first, 1);
  epoch_inputs(second, 0);  // a different history must not matter
  std::vector<torch::Tensor> again = epoch_inputs(second, 1);
  ASSERT_EQ(epoch1.size(), again.size());
  for (size_t i = 0; i < epoch1.size(); ++i) EXPECT_TRUE(torch::equal(epoch1[i], again[i]));
  std::vector<torch::Tensor> epoch2 = epoch_inputs(first, 2);
  EXPECT_FALSE(torch::equal(torch::cat(epoch1).sum(0), torch::cat(epoch2).sum(0)))
      << "epochs 1 and 2 were augmented alike";
}

}  // namespace augment_test
}  // namespace kiln::data
