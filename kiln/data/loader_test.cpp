#include "kiln/data/loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <numeric>
#include <thread>

#include "kiln/core/config.h"
#include "kiln/core/error.h"
#include "tests/support/components.h"

namespace kiln::data {
namespace loader_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  std::iota(out.begin(), out.end(), 0);
  return out;
}

std::vector<int64_t> to_vector(const torch::Tensor& t) {
  torch::Tensor flat = t.to(torch::kInt64).contiguous();
  return {flat.data_ptr<int64_t>(), flat.data_ptr<int64_t>() + flat.numel()};
}

// Example i has input [i, 100 + i] and target i, so a batch shows which examples it holds and
// whether inputs and targets stayed paired.
std::shared_ptr<const Dataset> numbered_dataset(int64_t n) {
  torch::Tensor index = torch::arange(n, torch::kInt64);
  torch::Tensor inputs = torch::stack({index, index + 100}, 1).to(torch::kFloat32);
  return std::make_shared<TensorDataset>(inputs, index);
}

// Every target the loader yields in one epoch, and the size of each batch.
struct Epoch {
  std::vector<int64_t> targets, batch_sizes;
};

Epoch run_epoch(Loader& loader) {
  Epoch epoch;
  while (auto batch = loader.next()) {
    EXPECT_TRUE(torch::equal(batch->input.select(1, 0).to(torch::kInt64), batch->target));
    epoch.batch_sizes.push_back(batch->size());
    for (int64_t t : to_vector(batch->target)) epoch.targets.push_back(t);
  }
  return epoch;
}

TEST(EpochOrder, IsAPermutation) {
  std::vector<int64_t> order = epoch_order(1000, 7, 3, true);
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, iota(1000));
}

TEST(EpochOrder, IsReproducibleFromSeedAndEpoch) {
  EXPECT_EQ(epoch_order(500, 7, 3, true), epoch_order(500, 7, 3, true));
}

TEST(EpochOrder, DiffersAcrossEpochsAndSeeds) {
  std::vector<int64_t> base = epoch_order(500, 7, 3, true);
  EXPECT_NE(base, iota(500));
  EXPECT_NE(base, epoch_order(500, 7, 4, true));
  EXPECT_NE(base, epoch_order(500, 8, 3, true));
  EXPECT_NE(epoch_order(500, 1, 0, true), epoch_order(500, 2, 0, true));
}

TEST(EpochOrder, IsTheIdentityWithoutShuffle) {
  EXPECT_EQ(epoch_order(50, 7, 3, false), iota(50));
  EXPECT_TRUE(epoch_order(0, 7, 3, true).empty());
  EXPECT_THAT(epoch_order(1, 7, 3, true), ElementsAre(0));
}

TEST(Loader, CoversEveryExampleOnceWithAPartialLastBatch) {
  Loader loader(numbered_dataset(10), {}, {3, true, false, 5});
  EXPECT_EQ(loader.batches_per_epoch(), 4);
  for (int64_t epoch : {0, 1}) {
    loader.start_epoch(epoch);
    Epoch seen = run_epoch(loader);
    EXPECT_THAT(seen.batch_sizes, ElementsAre(3, 3, 3, 1));
    EXPECT_EQ(seen.targets, epoch_order(10, 5, epoch, true)) << "epoch " << epoch;
    std::sort(seen.targets.begin(), seen.targets.end());
    EXPECT_EQ(seen.targets, iota(10));
    EXPECT_FALSE(loader.next().has_value());
  }
}

TEST(Loader, StartsAtEpochZeroAndRestartsAnEpochFromItsFirstBatch) {
  Loader loader(numbered_dataset(10), {}, {4, true, false, 5});
  EXPECT_EQ(run_epoch(loader).targets, epoch_order(10, 5, 0, true));
  loader.start_epoch(2);
  ASSERT_TRUE(loader.next().has_value());
  loader.start_epoch(2);
  EXPECT_EQ(run_epoch(loader).targets, epoch_order(10, 5, 2, true));
}

TEST(Loader, DropLastSkipsTheShortBatch) {
  Loader loader(numbered_dataset(10), {}, {3, true, true, 5});
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  Epoch seen = run_epoch(loader);
  EXPECT_THAT(seen.batch_sizes, ElementsAre(3, 3, 3));
  std::vector<int64_t> expected = epoch_order(10, 5, 0, true);
  expected.resize(9);
  EXPECT_EQ(seen.targets, expected);
}

TEST(Loader, BatchesPerEpochForExactAndSmallDatasets) {
  EXPECT_EQ(Loader(numbered_dataset(12), {}, {4, false, false, 1}).batches_per_epoch(), 3);
  EXPECT_EQ(Loader(numbered_dataset(12), {}, {4, false, true, 1}).batches_per_epoch(), 3);
  EXPECT_EQ(Loader(numbered_dataset(3), {}, {4, false, false, 1}).batches_per_epoch(), 1);
  EXPECT_EQ(Loader(numbered_dataset(3), {}, {4, false, true, 1}).batches_per_epoch(), 0);
  Loader none(numbered_dataset(3), {}, {4, false, true, 1});
  EXPECT_FALSE(none.next().has_value());
}

TEST(Loader, KeepsDatasetOrderWithoutShuffle) {
  Loader loader(numbered_dataset(7), {}, {2, false, false, 5});
  EXPECT_EQ(run_epoch(loader).targets, iota(7));
}

TEST(Loader, AppliesTransformsInOrderToInputsOnly) {
  std::vector<std::shared_ptr<const Transform>> transforms = {
      make_transform("{type: normalize, mean: 1, std: 2}"),
      make_transform("{type: normalize, mean: 0, std: 0.5}")};
  Loader loader(numbered_dataset(4), transforms, {4, false, false, 1});
  auto batch = loader.next();
  ASSERT_TRUE(batch.has_value());
  // ((x - 1) / 2) / 0.5 = x - 1; the reverse order would give (x / 0.5 - 1) / 2 = x - 0.5.
  torch::Tensor index = torch::arange(4, torch::kFloat32);
  EXPECT_TRUE(torch::allclose(batch->input, torch::stack({index - 1, index + 99}, 1)));
  EXPECT_THAT(to_vector(batch->target), ElementsAre(0, 1, 2, 3));
}

TEST(Normalize, ScalarMeanAndStdApplyToEveryValue) {
  auto normalize = make_transform("{type: normalize, mean: 0.5, std: 0.25}");
  torch::Tensor x = torch::tensor({{0.5f, 1.0f}, {0.0f, 0.75f}});
  torch::Tensor expected = torch::tensor({{0.0f, 2.0f}, {-2.0f, 1.0f}});
  EXPECT_TRUE(torch::allclose(normalize->apply(x), expected));
}

TEST(Normalize, PerChannelValuesLineUpWithDimensionOne) {
  auto normalize = make_transform("{type: normalize, mean: [1, 2], std: [1, 4]}");
  torch::Tensor x = torch::full({3, 2, 2, 2}, 6.0f);
  torch::Tensor y = normalize->apply(x);
  ASSERT_EQ(y.sizes(), x.sizes());
  EXPECT_TRUE(torch::allclose(y.select(1, 0), torch::full({3, 2, 2}, 5.0f)));
  EXPECT_TRUE(torch::allclose(y.select(1, 1), torch::full({3, 2, 2}, 1.0f)));
}

TEST(Normalize, RejectsAChannelCountMismatch) {
  auto normalize = make_transform("{type: normalize, mean: [1, 2, 3], std: 1}");
  try {
    normalize->apply(torch::zeros({2, 2, 4, 4}));
    FAIL() << "accepted 3 means for 2 channels";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("3 values"));
    EXPECT_THAT(e.what(), HasSubstr("2 channels"));
  }
  EXPECT_THROW(normalize->apply(torch::zeros({2})), Error);
}

TEST(Normalize, RejectsANonPositiveStdWhenRead) {
  EXPECT_THROW(make_transform("{type: normalize, std: [1, 0]}"), ConfigError);
  EXPECT_THROW(make_transform("{type: normalize, std: []}"), ConfigError);
}

// A campaign's find: an export's model.yaml with `mean: [.inf]` answered NaN to every request.
TEST(Normalize, RefusesValuesThatFloat32MakesInfiniteOrZero) {
  for (const char* spec : {"{type: normalize, mean: [.inf]}", "{type: normalize, mean: 1.0e39}",
                           "{type: normalize, std: .inf}", "{type: normalize, std: 1.0e-46}"})
    EXPECT_THROW(make_transform(spec), ConfigError) << spec;
  EXPECT_NO_THROW(make_transform("{type: normalize, mean: -3.0e38, std: 1.0e-30}"));
}

TEST(TensorDataset, RejectsInputsAndTargetsOfDifferentLengths) {
  try {
    TensorDataset(torch::zeros({3, 2}), torch::zeros({4}, torch::kInt64));
    FAIL() << "accepted 3 inputs with 4 targets";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("3 inputs but 4 targets"));
  }
}

TEST(TensorDataset, ReportsSizeAndExampleShapeAndGathers) {
  TensorDataset dataset(torch::arange(5 * 2 * 3, torch::kFloat32).view({5, 1, 2, 3}),
                        torch::arange(5, torch::kInt64));
  EXPECT_EQ(dataset.size(), 5);
  EXPECT_THAT(dataset.input_shape(), ElementsAre(1, 2, 3));
  Batch batch = dataset.gather(torch::tensor({4, 1}, torch::kInt64));
  EXPECT_EQ(batch.size(), 2);
  EXPECT_THAT(to_vector(batch.target), ElementsAre(4, 1));
  EXPECT_EQ(batch.input[0][0][0][0].item<float>(), 24.0f);
  EXPECT_EQ(batch.input[1][0][0][0].item<float>(), 6.0f);
}

// Every batch of the epoch the loader stands in, from where it stands.
std::vector<Batch> rest_of_epoch(Loader& loader) {
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(*batch);
  return batches;
}

void expect_same_batches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i].input, b[i].input)) << "batch " << i;
    EXPECT_TRUE(torch::equal(a[i].target, b[i].target)) << "batch " << i;
  }
}

LoaderOptions parallel_options(int64_t workers, int64_t prefetch) {
  LoaderOptions options{16, true, false, 3};
  options.workers = workers;
  options.prefetch = prefetch;
  return options;
}

TEST(Loader, WorkerThreadsDeliverExactlyTheBatchesOfTheSerialLoader) {
  std::vector<std::shared_ptr<const Transform>> noise = {
      make_transform("{type: gaussian_noise, std: 1}")};
  Loader serial(numbered_dataset(1000), noise, parallel_options(0, 1));
  std::vector<Batch> expected = rest_of_epoch(serial);
  for (int64_t workers : {1, 2, 5}) {
    Loader parallel(numbered_dataset(1000), noise, parallel_options(workers, 3));
    expect_same_batches(rest_of_epoch(parallel), expected);
  }
}

TEST(Loader, SeekingToASavedPositionContinuesWithTheSameBatches) {
  std::vector<std::shared_ptr<const Transform>> noise = {
      make_transform("{type: gaussian_noise, std: 1}")};
  Loader straight(numbered_dataset(200), noise, parallel_options(2, 4));
  straight.start_epoch(2);
  for (int i = 0; i < 5; ++i) straight.next();
  EXPECT_EQ(straight.position(), (LoaderPosition{2, 5}));
  std::vector<Batch> rest = rest_of_epoch(straight);
  ASSERT_EQ(rest.size(), 8u);  // 13 batches of 16 make 200
  // A new loader (as after a restart) that has already started somewhere else.
  Loader resumed(numbered_dataset(200), noise, parallel_options(2, 4));
  resumed.next();
  resumed.seek({2, 5});
  expect_same_batches(rest_of_epoch(resumed), rest);
  EXPECT_EQ(resumed.position(), (LoaderPosition{2, 13}));
}

TEST(Loader, RefusesAPositionPastTheEndOfTheEpoch) {
  Loader loader(numbered_dataset(20), {}, {8, true, false, 1});
  loader.seek({0, 3});  // the end of the epoch: valid, and empty
  EXPECT_FALSE(loader.next().has_value());
  try {
    loader.seek({0, 4});
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("past its 3 batches"));
  }
}

TEST(Shard, RanksGetDisjointPartsOfEqualSizeCoveringAllButTheRemainder) {
  std::vector<int64_t> order = epoch_order(103, 5, 0, true);
  std::vector<int64_t> all;
  for (int64_t rank = 0; rank < 4; ++rank) {
    std::vector<int64_t> part = shard_of(order, rank, 4);
    EXPECT_EQ(part.size(), 25u);
    all.insert(all.end(), part.begin(), part.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::unique(all.begin(), all.end()), all.end()) << "two ranks share an example";
  EXPECT_EQ(all.size(), 100u);
  EXPECT_EQ(shard_of(order, 0, 1), order);
}

TEST(Loader, ShardedLoadersTogetherVisitEachExampleOnce) {
  std::vector<int64_t> seen;
  for (int64_t rank = 0; rank < 3; ++rank) {
    LoaderOptions options{4, true, false, 7};
    options.rank = rank;
    options.world = 3;
    Loader loader(numbered_dataset(30), {}, options);
    EXPECT_EQ(loader.batches_per_epoch(), 3);  // 10 examples each
    for (const Batch& b : rest_of_epoch(loader))
      for (int64_t t : to_vector(b.target)) seen.push_back(t);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, iota(30));
}

// A dataset whose example 5 cannot be read, as a corrupt record would be.
class DatasetWithABadExample : public TensorDataset {
 public:
  DatasetWithABadExample()
      : TensorDataset(torch::arange(20, torch::kFloat32).view({20, 1}),
                      torch::arange(20, torch::kInt64)) {}
  Batch gather(const torch::Tensor& indices) const override {
    if ((indices == 5).any().item<bool>()) throw DataError("bad.tfrecord", 5, 1234, "broken");
    return TensorDataset::gather(indices);
  }
};

TEST(Loader, AnErrorInAWorkerReachesTheConsumerAtItsBatch) {
  LoaderOptions options{4, false, false, 1};
  options.workers = 2;
  Loader loader(std::make_shared<DatasetWithABadExample>(), {}, options);
  EXPECT_TRUE(loader.next().has_value());  // examples 0-3
  try {
    loader.next();
    FAIL() << "the batch holding example 5 was delivered";
  } catch (const DataError& e) {
    EXPECT_EQ(e.offset(), 1234);
  }
  loader.seek({0, 2});  // the loader is still usable
  EXPECT_THAT(to_vector(loader.next()->target), ElementsAre(8, 9, 10, 11));
}

// Each worker's delivery marks its batch; the consumer sees every batch delivered, and the
// batch's `arrive` runs once, on the consumer's thread, before next() returns it.
TEST(Loader, DeliversEachBatchOnItsWorkerAndArrivesItOnTheConsumer) {
  LoaderOptions options;
  options.batch_size = 4;
  options.shuffle = false;
  options.workers = 2;
  auto arrivals = std::make_shared<std::vector<std::thread::id>>();
  auto mutex = std::make_shared<std::mutex>();
  options.deliver = [arrivals, mutex](Batch batch) {
    batch.input = batch.input * 2;
    batch.arrive = [arrivals, mutex] {
      std::lock_guard<std::mutex> lock(*mutex);
      arrivals->push_back(std::this_thread::get_id());
    };
    return batch;
  };
  Loader loader(numbered_dataset(10), {}, options);
  int64_t batches = 0;
  while (std::optional<Batch> batch = loader.next()) {
    EXPECT_FALSE(batch->arrive) << "handed over with its arrival still to run";
    EXPECT_TRUE(torch::equal(batch->input.select(1, 0).to(torch::kInt64), batch->target * 2));
    ++batches;
    EXPECT_EQ(arrivals->size(), static_cast<size_t>(batches));
  }
  EXPECT_EQ(batches, 3);
  for (std::thread::id id : *arrivals) EXPECT_EQ(id, std::this_thread::get_id());
}

}  // namespace loader_test
}  // namespace kiln::data
