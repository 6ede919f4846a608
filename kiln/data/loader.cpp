#include "kiln/data/loader.h"

#include <random>

#include "kiln/core/error.h"

namespace kiln::data {
namespace {

// Batch `index` of the epoch whose examples, in order, are `order`.
Batch make_batch(const Dataset& dataset,
                 const std::vector<std::shared_ptr<const Transform>>& transforms,
                 const std::vector<int64_t>& order, const LoaderOptions& options, int64_t epoch,
                 int64_t index) {
  int64_t first = index * options.batch_size;
  int64_t count = std::min<int64_t>(options.batch_size, static_cast<int64_t>(order.size()) - first);
  // from_blob does not copy; `order` outlives the gather.
  torch::Tensor indices =
      torch::from_blob(const_cast<int64_t*>(order.data() + first), {count}, torch::kInt64);
  Batch batch = dataset.gather(indices);
  if (transforms.empty()) return batch;
  at::Generator rng = batch_generator(options.seed, epoch, index);
  for (const auto& transform : transforms) batch.input = transform->apply(batch.input, rng);
  return batch;
}

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

std::vector<int64_t> shard_of(const std::vector<int64_t>& order, int64_t rank, int64_t world) {
  if (world == 1) return order;
  int64_t each = static_cast<int64_t>(order.size()) / world;
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
  start_epoch(0);
}

int64_t Loader::examples_per_epoch() const {
  return options_.world == 1 ? dataset_->size() : dataset_->size() / options_.world;
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
  position_ = position;
  auto order = std::make_shared<const std::vector<int64_t>>(
      shard_of(epoch_order(dataset_->size(), options_.seed, position.epoch, options_.shuffle),
               options_.rank, options_.world));
  // The job holds its own references, so batches in flight outlive a later seek().
  workers_->start(
      [dataset = dataset_, transforms = transforms_, order, options = options_,
       epoch = position.epoch](int64_t index) {
        return make_batch(*dataset, transforms, *order, options, epoch, index);
      },
      position.batch, batches);
}

std::optional<Batch> Loader::next() {
  std::optional<Batch> batch = workers_->next();
  if (batch) position_.batch += 1;
  return batch;
}

}  // namespace kiln::data
