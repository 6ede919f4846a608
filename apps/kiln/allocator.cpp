#include "apps/kiln/allocator.h"

#include <cstdlib>
#include <string>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace kiln::cli {

bool keep_freed_memory_for_reuse() {
#ifdef __GLIBC__
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string(tunables).find("glibc.malloc.") != std::string::npos) return false;
  // Large blocks come from the heap, which keeps them, and its free top is not given back.
  return mallopt(M_MMAP_MAX, 0) == 1 && mallopt(M_TRIM_THRESHOLD, 0x7fffffff) == 1;
#else
  return false;
#endif
}

}  // namespace kiln::cli
