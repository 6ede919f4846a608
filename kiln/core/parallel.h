#pragma once
// Work spread over the machine's cores for passes over many independent items (reading run
// folders, the parts of a large CSV file, typing its cells): no pool, threads started for the
// pass and joined before it returns.
// Thread-safety: `work` runs on several threads at once, each item on one of them.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "kiln/core/usable_cpus.h"

namespace kiln {

/// The threads a pass uses: the CPUs this process may use, at most 8 (past that the passes kiln
/// runs are bound by memory, not by cores).
inline size_t pass_thread_count() { return std::clamp<size_t>(size_t(usable_cpus().count), 1, 8); }

/// Calls work(i) once for every i in [0, count), on up to pass_thread_count() threads (this one
/// among them), taking the items in order as threads come free. The first exception thrown is
/// rethrown here once every thread has stopped.
template <class Work>
void parallel_for(size_t count, const Work& work) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto run = [&] {
    for (size_t i = next++; i < count; i = next++) try {
        work(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(pass_thread_count(), count); ++t) helpers.emplace_back(run);
  run();
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kiln
