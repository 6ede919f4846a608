#include "kiln/data/ordered_workers.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <ATen/Parallel.h>
#include <omp.h>

#include "kiln/core/error.h"

namespace kiln::data {
namespace {

// LibTorch runs its intra-op parallelism on OpenMP, whose team size is per calling thread: left
// alone, every worker would bring its own team of "all cores" threads to fight the training
// thread's team. Workers make small tensors; one thread each is what they should use.
void use_one_intra_op_thread() {
  at::get_num_threads();  // LibTorch's lazy per-thread set-up first, so it cannot undo the next
                          // line
  omp_set_num_threads(1);
}

}  // namespace

struct OrderedWorkers::Shared {
  struct Result {
    Batch batch;
    std::exception_ptr error;
  };

  std::mutex mutex;
  std::condition_variable work_ready, result_ready;
  Job job;
  int64_t generation = 0;         // bumped by start(), so late results of a range are dropped
  int64_t next_job = 0, end = 0;  // the next job to hand out, and the end of the range
  int64_t next_out = 0;           // the next result the consumer takes
  int64_t capacity = 1;
  std::map<int64_t, Result> done;
  bool stopping = false;
  std::vector<std::thread> threads;

  bool has_work() const { return next_job < end && next_job < next_out + capacity; }
};

OrderedWorkers::OrderedWorkers(int64_t threads, int64_t capacity)
    : shared_(std::make_shared<Shared>()) {
  KILN_ASSERT(threads >= 0 && capacity >= 1);
  shared_->capacity = std::max(capacity, threads);
  for (int64_t i = 0; i < threads; ++i) shared_->threads.emplace_back([this] { work(); });
}

OrderedWorkers::~OrderedWorkers() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->stopping = true;
  }
  shared_->work_ready.notify_all();
  for (auto& thread : shared_->threads) thread.join();
}

void OrderedWorkers::start(Job job, int64_t first, int64_t end) {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->generation += 1;
    shared_->job = std::move(job);
    shared_->next_job = shared_->next_out = first;
    shared_->end = end;
    shared_->done.clear();
  }
  shared_->work_ready.notify_all();
}

void OrderedWorkers::work() {
  use_one_intra_op_thread();
  Shared& s = *shared_;
  std::unique_lock<std::mutex> lock(s.mutex);
  for (;;) {
    s.work_ready.wait(lock, [&] { return s.stopping || s.has_work(); });
    if (s.stopping) return;
    int64_t index = s.next_job++, generation = s.generation;
    Job job = s.job;  // a copy: start() may replace it while this one runs
    lock.unlock();
    Shared::Result result;
    try {
      result.batch = job(index);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
    if (generation != s.generation) continue;
    s.done[index] = std::move(result);
    s.result_ready.notify_all();
  }
}

std::optional<Batch> OrderedWorkers::next() {
  Shared& s = *shared_;
  std::unique_lock<std::mutex> lock(s.mutex);
  if (s.next_out >= s.end) return std::nullopt;
  int64_t index = s.next_out;
  if (s.threads.empty()) {
    s.next_job = ++s.next_out;
    Job job = s.job;
    lock.unlock();
    return job(index);
  }
  s.result_ready.wait(lock, [&] { return s.done.count(index) > 0; });
  Shared::Result result = std::move(s.done[index]);
  s.done.erase(index);
  s.next_out += 1;
  lock.unlock();
  s.work_ready.notify_all();
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.batch);
}

}  // namespace kiln::data
