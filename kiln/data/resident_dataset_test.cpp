// data.cache: device on the CPU, where the device's memory is host memory: the held examples are
// the source's, and a loader over them delivers the same batches, augmentations included, as a
// loader over the source. A streamed dataset cannot be held by index and says so.

#include "kiln/data/resident_dataset.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/error.h"
#include "kiln/data/loader.h"
#include "tests/support/components.h"

namespace kiln::data {
namespace resident_dataset_test {

using ::testing::HasSubstr;

// `count` random 1x8x8 images in [0, 1] with a class each and a named target.
std::shared_ptr<const Dataset> images(int64_t count) {
  torch::manual_seed(5);
  return std::make_shared<TensorDataset>(torch::rand({count, 1, 8, 8}),
                                         torch::randint(4, {count}, torch::kInt64),
                                         NamedTargets{{"size", torch::rand({count})}});
}

TEST(ResidentDataset, GathersWhatItsSourceGathersAcrossItsSlices) {
  std::shared_ptr<const Dataset> source = images(9000);  // more than one slice of 8192
  std::shared_ptr<const Dataset> held = resident_on(source, torch::kCPU, "data.cache", "train");
  ASSERT_EQ(held->size(), 9000);
  torch::Tensor indices = torch::tensor(std::vector<int64_t>{8999, 0, 8191, 8192, 17});
  Batch expected = source->gather(indices), got = held->gather(indices);
  EXPECT_TRUE(torch::equal(got.input, expected.input));
  EXPECT_TRUE(torch::equal(got.target, expected.target));
  EXPECT_TRUE(torch::equal(got.targets.at("size"), expected.targets.at("size")));
  EXPECT_EQ(held->input_shape(), source->input_shape());
}

TEST(ResidentDataset, ALoaderDeliversTheSameAugmentedBatchesAsOverItsSource) {
  std::shared_ptr<const Dataset> source = images(300);
  std::shared_ptr<const Dataset> held = resident_on(source, torch::kCPU, "data.cache", "train");
  std::vector<std::shared_ptr<const Transform>> transforms;
  for (const char* spec :
       {"{type: random_crop, size: 8, padding: 2}", "random_flip", "{type: random_erasing, p: 0.7}",
        "{type: normalize, mean: 0.5, std: 0.25}"})
    transforms.push_back(make_transform(spec));
  LoaderOptions options;
  options.batch_size = 64;
  options.workers = 2;
  options.seed = 11;
  Loader plain(source, transforms, options), cached(held, transforms, options);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    plain.start_epoch(epoch);
    cached.start_epoch(epoch);
    int64_t batches = 0;
    while (auto expected = plain.next()) {
      std::optional<Batch> got = cached.next();
      ASSERT_TRUE(got);
      EXPECT_TRUE(torch::equal(got->input, expected->input)) << "epoch " << epoch;
      EXPECT_TRUE(torch::equal(got->target, expected->target));
      ++batches;
    }
    EXPECT_FALSE(cached.next());
    EXPECT_EQ(batches, 5);
  }
}

// Records read front to back: nothing to gather by index.
class Streamed : public StreamingDataset {
 public:
  int64_t size() const override { return 10; }
  std::vector<int64_t> input_shape() const override { return {2}; }
  torch::Dtype input_dtype() const override { return torch::kFloat32; }
  int64_t examples_per_epoch(int64_t) const override { return 10; }
  int64_t examples_of_rank(int64_t, int64_t) const override { return 10; }
  std::unique_ptr<io::RecordStream> open(io::EpochPlan) const override { return nullptr; }
  Batch decode(const std::vector<io::Record>&) const override { return {}; }
};

TEST(ResidentDataset, AStreamedDatasetIsAConfigErrorAtDataCache) {
  try {
    resident_on(std::make_shared<Streamed>(), torch::kCPU, "data.cache", "val");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.path(), "data.cache");
    EXPECT_THAT(e.what(), HasSubstr("the val data is streamed"));
    EXPECT_THAT(e.what(), HasSubstr("`cache: decoded`, or set data.cache: none"));
  }
}

}  // namespace resident_dataset_test
}  // namespace kiln::data
