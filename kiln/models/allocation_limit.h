#pragma once
// A bound on the CPU memory one thread's tensors take while a model is built from a description
// kiln reads back (an export's model.yaml, a run's config.yaml): either may have been edited,
// and a layer edited to `out: 1000000000` took 8 GB before its weights were compared with the
// model (a campaign's find). The weights file says how big the model is; building may take a
// bounded multiple of it, and what asks for more is refused before it is allocated.
// Thread-safety: the bound is the constructing thread's own; other threads allocate as before.

#include <cstddef>
#include <string>

namespace kiln::models {

class AllocationLimit {
 public:
  /// While this lives, CPU tensors allocated on this thread count against `bytes` (frees are not
  /// given back: building keeps what it allocates); the allocation that would pass it throws a
  /// DataError naming `file` and `what` was being done. Limits nest: the inner one applies.
  AllocationLimit(size_t bytes, std::string file, std::string what);
  ~AllocationLimit();
  AllocationLimit(const AllocationLimit&) = delete;
  AllocationLimit& operator=(const AllocationLimit&) = delete;

  /// Bytes counted so far.
  size_t used() const { return used_; }

 private:
  friend class CountingAllocator;
  void charge(size_t bytes);

  size_t bytes_, used_ = 0;
  std::string file_, what_;
  AllocationLimit* outer_;
};

/// What building a model whose weights are the file `weights` may allocate: its tensors three
/// times over (initializers and shape checks compute beside them) and 256 MiB more. A file that
/// cannot be read counts as empty.
size_t build_allowance(const std::string& weights);

}  // namespace kiln::models
