#pragma once

namespace kiln::cli {

/// Has glibc's malloc keep freed memory for reuse instead of handing it back to the kernel.
/// By default glibc serves each allocation above 32 MiB (a batch's activations, its gradients)
/// with a fresh mmap and unmaps it on free, so every step page-faults all of it in again: about
/// half of evaluation time at batch 1000. Kept memory is reused by the next step; the process
/// holds on to its peak instead (docs/benchmarks.md has both numbers). A GLIBC_TUNABLES that sets
/// any `glibc.malloc.` tunable is left to decide alone. True when the setting was made.
bool keep_freed_memory_for_reuse();

}  // namespace kiln::cli
