#include "kiln/data/loader.h"

#include <random>

namespace kiln::data {

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

Loader::Loader(std::shared_ptr<const Dataset> dataset,
               std::vector<std::shared_ptr<const Transform>> transforms, LoaderOptions options)
    : dataset_(std::move(dataset)), transforms_(std::move(transforms)), options_(options) {
  KILN_ASSERT(options_.batch_size > 0);
  start_epoch(0);
}

int64_t Loader::batches_per_epoch() const {
  int64_t n = dataset_->size(), b = options_.batch_size;
  return options_.drop_last ? n / b : (n + b - 1) / b;
}

void Loader::start_epoch(int64_t epoch) {
  order_ = epoch_order(dataset_->size(), options_.seed, epoch, options_.shuffle);
  position_ = 0;
  epoch_ = epoch;
}

std::optional<Batch> Loader::next() {
  size_t remaining = order_.size() - position_;
  auto wanted = static_cast<size_t>(options_.batch_size);
  if (remaining == 0 || (options_.drop_last && remaining < wanted)) return std::nullopt;
  size_t count = std::min(remaining, wanted);
  torch::Tensor indices =
      torch::from_blob(order_.data() + position_, {static_cast<int64_t>(count)}, torch::kInt64);
  int64_t batch_index = static_cast<int64_t>(position_) / options_.batch_size;
  position_ += count;
  Batch batch = dataset_->gather(indices);
  if (transforms_.empty()) return batch;
  at::Generator rng = batch_generator(options_.seed, epoch_, batch_index);
  for (const auto& transform : transforms_) batch.input = transform->apply(batch.input, rng);
  return batch;
}

}  // namespace kiln::data
