#include "kiln/data/loader.h"

#include <map>
#include <mutex>
#include <random>
#include <utility>

#include "kiln/core/error.h"

namespace kiln::data {
namespace {

void apply_transforms(Batch& batch, const std::vector<std::shared_ptr<const Transform>>& transforms,
                      uint64_t seed, int64_t epoch, int64_t index) {
  if (transforms.empty()) return;
  at::Generator rng = batch_generator(seed, epoch, index);
  for (const auto& transform : transforms) batch.input = transform->apply(batch.input, rng);
}

// Batch `index` of the epoch whose examples, in order, are `order`.
Batch make_batch(const std::shared_ptr<const Dataset>& dataset,
                 const std::vector<std::shared_ptr<const Transform>>& transforms,
                 const std::vector<int64_t>& order, const LoaderOptions& options, int64_t epoch,
                 int64_t index) {
  int64_t first = index * options.batch_size;
  int64_t count = std::min<int64_t>(options.batch_size, static_cast<int64_t>(order.size()) - first);
  // from_blob does not copy; `order` outlives the gather.
  torch::Tensor indices =
      torch::from_blob(const_cast<int64_t*>(order.data() + first), {count}, torch::kInt64);
  Batch batch = dataset->gather(indices);
  if (!batch.origin)
    batch.origin = [dataset, rows = std::vector<int64_t>(order.begin() + first,
                                                         order.begin() + first + count)](
                       int64_t row) { return dataset->locate(rows.at(static_cast<size_t>(row))); };
  apply_transforms(batch, transforms, options.seed, epoch, index);
  return options.deliver ? options.deliver(std::move(batch)) : batch;
}

// Cuts the records of a streaming epoch into batches, in order, for whichever worker asks: the
// stream is read by one thread at a time, and batches read ahead of their job wait here.
class StreamBatcher {
 public:
  StreamBatcher(std::unique_ptr<io::RecordStream> stream, int64_t batch_size, int64_t first)
      : stream_(std::move(stream)), batch_size_(batch_size), next_batch_(first) {}

  std::vector<io::Record> take(int64_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (next_batch_ <= index) waiting_[next_batch_++] = read_batch();
    std::vector<io::Record> records = std::move(waiting_.at(index));
    waiting_.erase(index);
    return records;
  }

 private:
  std::vector<io::Record> read_batch() {
    std::vector<io::Record> records;
    while (static_cast<int64_t>(records.size()) < batch_size_)
      if (auto record = stream_->next())
        records.push_back(std::move(*record));
      else
        break;
    return records;
  }

  std::mutex mutex_;
  std::unique_ptr<io::RecordStream> stream_;
  int64_t batch_size_, next_batch_;
  std::map<int64_t, std::vector<io::Record>> waiting_;
};

}  // namespace

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch, bool shuffle) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  if (!shuffle) return order;
  std::mt19937_64 engine(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {
    // Modulo bias is below 2^-40 for any dataset that fits in memory.
    auto j = static_cast<int64_t>(engine() % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

int64_t shard_size(int64_t n, int64_t rank, int64_t world, bool equal) {
  if (world == 1) return n;
  return equal ? n / world : (n - rank + world - 1) / world;
}

std::vector<int64_t> shard_of(const std::vector<int64_t>& order, int64_t rank, int64_t world,
                              bool equal) {
  if (world == 1) return order;
  int64_t each = shard_size(static_cast<int64_t>(order.size()), rank, world, equal);
  std::vector<int64_t> part(static_cast<size_t>(each));
  for (int64_t i = 0; i < each; ++i)
    part[static_cast<size_t>(i)] = order[static_cast<size_t>(rank + i * world)];
  return part;
}

Loader::Loader(std::shared_ptr<const Dataset> dataset,
               std::vector<std::shared_ptr<const Transform>> transforms, LoaderOptions options)
    : dataset_(std::move(dataset)),
      transforms_(std::move(transforms)),
      options_(options),
      workers_(std::make_unique<OrderedWorkers>(options.workers, options.prefetch)) {
  KILN_ASSERT(options_.batch_size > 0 && options_.world >= 1);
  KILN_ASSERT(options_.rank >= 0 && options_.rank < options_.world);
  untouched_ = false;
  start_epoch(0);
}

int64_t Loader::examples_per_epoch() const {
  if (const StreamingDataset* streaming = dataset_->as_streaming())
    return options_.equal_shards ? streaming->examples_per_epoch(options_.world)
                                 : streaming->examples_of_rank(options_.rank, options_.world);
  return shard_size(dataset_->size(), options_.rank, options_.world, options_.equal_shards);
}

int64_t Loader::batches_per_epoch() const {
  int64_t n = examples_per_epoch(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void Loader::seek(LoaderPosition position) {
  int64_t batches = batches_per_epoch();
  KILN_CHECK(position.batch >= 0 && position.batch <= batches,
             "data position {} of epoch {} is past its {} batches; was the dataset changed?",
             position.batch, position.epoch, batches);
  // Already there with nothing taken (the constructor starts epoch 0): keep the batches in flight.
  if (untouched_ && position == position_) return;
  position_ = position;
  untouched_ = true;
  if (dataset_->as_streaming()) return seek_stream(position, batches);
  auto order = std::make_shared<const std::vector<int64_t>>(
      shard_of(epoch_order(dataset_->size(), options_.seed, position.epoch, options_.shuffle),
               options_.rank, options_.world, options_.equal_shards));
  // The job holds its own references, so batches in flight outlive a later seek().
  workers_->start(
      [dataset = dataset_, transforms = transforms_, order, options = options_,
       epoch = position.epoch](int64_t index) {
        return make_batch(dataset, transforms, *order, options, epoch, index);
      },
      position.batch, batches);
}

void Loader::seek_stream(LoaderPosition position, int64_t batches) {
  const StreamingDataset& streaming = *dataset_->as_streaming();
  io::EpochPlan plan;
  plan.seed = options_.seed;
  plan.epoch = position.epoch;
  plan.shuffle = options_.shuffle;
  plan.rank = options_.rank;
  plan.world = options_.world;
  plan.count = examples_per_epoch();
  std::unique_ptr<io::RecordStream> stream = streaming.open(plan);
  // The epoch's stream is the same every time it is opened: skip what was already served.
  for (int64_t i = 0; i < position.batch * options_.batch_size; ++i) stream->next();
  auto batcher =
      std::make_shared<StreamBatcher>(std::move(stream), options_.batch_size, position.batch);
  workers_->start(
      [dataset = dataset_, transforms = transforms_, batcher, seed = options_.seed,
       deliver = options_.deliver, epoch = position.epoch](int64_t index) {
        Batch batch = dataset->as_streaming()->decode(batcher->take(index));
        apply_transforms(batch, transforms, seed, epoch, index);
        return deliver ? deliver(std::move(batch)) : batch;
      },
      position.batch, batches);
}

std::optional<Batch> Loader::next() {
  untouched_ = false;
  std::optional<Batch> batch = workers_->next();
  if (!batch) return batch;
  position_.batch += 1;
  if (batch->arrive) std::exchange(batch->arrive, nullptr)();
  return batch;
}

}  // namespace kiln::data
