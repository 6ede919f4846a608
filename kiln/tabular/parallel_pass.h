#pragma once
// One pass over the records of a TabularSource on several threads, in parts of a fixed number of
// records: each part gathers into its own accumulator, and the caller merges them in part order,
// so that sums come out the same whatever the number of threads.
// Thread-safety: `make` and `add` run on the pass's threads; each accumulator on one of them.

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "kiln/tabular/feature_columns.h"

namespace kiln::tabular {

constexpr int64_t kPassPartRows = 16384;

/// The accumulators of the parts, in order: `make()` for each, `add(acc, row, features, where)`
/// for each of its records (`row` as the source numbers it). The first part's error is rethrown
/// (the one a single pass meets first).
template <class Accumulator, class Make, class Add>
std::vector<Accumulator> gather_parts(const TabularSource& source, int64_t threads, Make make,
                                      Add add) {
  int64_t rows = source.rows();
  int64_t parts = std::max<int64_t>(1, (rows + kPassPartRows - 1) / kPassPartRows);
  std::vector<Accumulator> gathered(static_cast<size_t>(parts));
  std::vector<std::exception_ptr> failures(static_cast<size_t>(parts));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t p = next++; p < parts; p = next++) try {
        Accumulator part = make();
        source.visit(p * kPassPartRows, std::min(rows, (p + 1) * kPassPartRows),
                     [&](int64_t row, const io::Features& features,
                         const io::RecordLocation& where) { add(part, row, features, where); });
        gathered[size_t(p)] = std::move(part);
      } catch (...) {
        failures[size_t(p)] = std::current_exception();
      }
  };
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < std::min(threads, parts); ++t) workers.emplace_back(work);
  work();
  for (auto& worker : workers) worker.join();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
  return gathered;
}

}  // namespace kiln::tabular
