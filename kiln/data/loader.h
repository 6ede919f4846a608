#pragma once
// Turns a dataset into the batches of one epoch at a time, the input pipeline of docs/design.md §2:
//   shard   each of `world` ranks takes every world-th example of the epoch's order, so the ranks
//           see disjoint parts of equal size (training: every rank takes as many steps), or, with
//           equal_shards off, all of it between them (evaluation: every example counts once);
//   shuffle a seeded permutation, reproducible from (seed, epoch) alone;
//   map     gather (decode) and transforms, per batch, on `workers` threads, results handed back
//           in order and `prefetch` batches ahead;
//   batch   fixed-size batches, the last one short unless drop_last.
// A streaming dataset (records read from disk every epoch) replaces shard and shuffle by its own
// record stream (io/record_stream.h), read by one worker at a time.
// Each batch depends on (seed, epoch, batch index) only, so whichever thread makes it, it is the
// same, and a loader moved to a saved position() continues with exactly the batches it would have
// produced.
// Thread-safety: one loader per consumer thread; its worker threads are its own.

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/data/loader_position.h"
#include "kiln/data/ordered_workers.h"
#include "kiln/data/transform.h"

namespace kiln::data {

struct LoaderOptions {
  int64_t batch_size = 128;
  bool shuffle = true;
  bool drop_last = false;
  uint64_t seed = 1;
  int64_t workers = 0;   // 0: batches are made on the consumer's thread
  int64_t prefetch = 4;  // batches made ahead of the consumer
  int64_t rank = 0, world = 1;
  bool equal_shards = true;  // false: the first ranks take one of the remainder's examples each
  /// Applied to each batch on the thread that made it, after the transforms (engine::device_feed:
  /// the copy to the GPU); none: batches are handed over as made.
  std::function<Batch(Batch)> deliver{};
};

class Loader {
 public:
  Loader(std::shared_ptr<const Dataset> dataset,
         std::vector<std::shared_ptr<const Transform>> transforms, LoaderOptions options);

  int64_t batches_per_epoch() const;
  /// Examples this rank sees per epoch (before drop_last).
  int64_t examples_per_epoch() const;
  const Dataset& dataset() const { return *dataset_; }
  /// Starts epoch `epoch` (0-based) from its first batch.
  void start_epoch(int64_t epoch) { seek({epoch, 0}); }
  /// Continues from `position`, as saved by position().
  void seek(LoaderPosition position);
  LoaderPosition position() const { return position_; }
  /// The next batch of the current epoch, or nothing at its end.
  std::optional<Batch> next();

 private:
  void seek_stream(LoaderPosition position, int64_t batches);

  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::shared_ptr<const Transform>> transforms_;
  LoaderOptions options_;
  LoaderPosition position_;
  bool untouched_ = false;  // seek() ran and next() has not since
  std::unique_ptr<OrderedWorkers> workers_;
};

/// The permutation of [0, n) for (seed, epoch): Fisher-Yates over a 64-bit Mersenne twister, so
/// it is the same on every platform and standard library.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch, bool shuffle);

/// Rank `rank`'s part of `order`: items rank, rank + world, ..., n / world of them, so that every
/// rank gets as many (the remainder, fewer than `world` items, is left out this epoch); with
/// `equal` false, every such item to the end, so that the ranks' parts make up all of `order`.
std::vector<int64_t> shard_of(const std::vector<int64_t>& order, int64_t rank, int64_t world,
                              bool equal = true);
/// How many items shard_of gives rank `rank` of `n`.
int64_t shard_size(int64_t n, int64_t rank, int64_t world, bool equal = true);

}  // namespace kiln::data
