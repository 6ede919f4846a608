#pragma once
// Turns a dataset into a sequence of batches for one epoch at a time: a seeded permutation
// (reproducible from (seed, epoch) alone, so a resumed run can rebuild it), fixed-size batches,
// then the transforms. Thread-safety: one loader per consumer thread.

#include <memory>
#include <optional>
#include <vector>

#include "kiln/data/dataset.h"
#include "kiln/data/transform.h"

namespace kiln::data {

struct LoaderOptions {
  int64_t batch_size = 128;
  bool shuffle = true;
  bool drop_last = false;
  uint64_t seed = 1;
};

class Loader {
 public:
  Loader(std::shared_ptr<const Dataset> dataset,
         std::vector<std::shared_ptr<const Transform>> transforms, LoaderOptions options);

  int64_t batches_per_epoch() const;
  const Dataset& dataset() const { return *dataset_; }
  /// Starts epoch `epoch` (0-based) from its first batch.
  void start_epoch(int64_t epoch);
  /// The next batch of the current epoch, or nothing at its end.
  std::optional<Batch> next();

 private:
  std::shared_ptr<const Dataset> dataset_;
  std::vector<std::shared_ptr<const Transform>> transforms_;
  LoaderOptions options_;
  std::vector<int64_t> order_;
  size_t position_ = 0;
  int64_t epoch_ = 0;
};

/// The permutation of [0, n) for (seed, epoch): Fisher-Yates over a 64-bit Mersenne twister, so
/// it is the same on every platform and standard library.
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch, bool shuffle);

}  // namespace kiln::data
