#pragma once
// Runs numbered jobs (batch k of an epoch) on a pool of threads and hands their results back in
// job order, at most `capacity` jobs ahead of the consumer: the map stage of the input pipeline
// with its bounded prefetch. A job that throws has its exception rethrown by next() at its turn,
// on the consumer's thread. start() abandons the jobs of the previous range: their results are
// dropped when they arrive.
// Thread-safety: start() and next() belong to one consumer thread; jobs run on the pool.

#include <functional>
#include <memory>
#include <optional>

#include "kiln/data/dataset.h"

namespace kiln::data {

class OrderedWorkers {
 public:
  using Job = std::function<Batch(int64_t index)>;

  /// With 0 threads every job runs inside next(), on the consumer's thread.
  OrderedWorkers(int64_t threads, int64_t capacity);
  ~OrderedWorkers();
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;

  /// From now on, next() returns job(first), job(first + 1), ..., job(end - 1).
  void start(Job job, int64_t first, int64_t end);
  /// The next result in order; nothing once the range is done.
  std::optional<Batch> next();

 private:
  struct Shared;
  void work();

  std::shared_ptr<Shared> shared_;
};

}  // namespace kiln::data
