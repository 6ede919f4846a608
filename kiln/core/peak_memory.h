#pragma once
// How much memory this process has used at most (system/peak_rss_mb, kiln bench) and uses now,
// and giving memory freed back to the system.

namespace kiln {

/// The largest resident set this process has had, in MiB.
double peak_resident_mb();

/// The resident set now, in MiB (0 where /proc does not say).
double resident_mb();

/// Gives the pages malloc holds free back to the system (glibc's malloc_trim; nothing
/// elsewhere). Why: kiln keeps freed memory for reuse (apps/kiln/allocator.cpp), which suits
/// training's same-sized steps, but a server that once read one huge request would keep its
/// peak for good. Takes milliseconds on a large heap: call it after rare, large work.
void give_back_freed_memory();

}  // namespace kiln
