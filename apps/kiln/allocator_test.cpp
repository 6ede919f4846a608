// The allocator setting of run_cli: after it, a block far above glibc's mmap threshold comes from
// the heap and stays there once freed; a GLIBC_TUNABLES naming malloc turns it off.

#include "apps/kiln/allocator.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <stdlib.h>

#include <cstdlib>

namespace kiln::cli {
namespace allocator_test {

TEST(Allocator, AGlibcMallocTunableLeavesTheSettingToTheUser) {
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_max=65536", 1);
  EXPECT_FALSE(keep_freed_memory_for_reuse());
  ::unsetenv("GLIBC_TUNABLES");
}

TEST(Allocator, LargeBlocksComeFromTheHeapAndStayForReuse) {
#if defined(__SANITIZE_ADDRESS__) || defined(KILN_SANITIZED_BUILD)  // CMakeLists.txt
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's malloc (make test-asan)";
#endif
  ::unsetenv("GLIBC_TUNABLES");  // the process's own malloc tunables are already in force
  ASSERT_TRUE(keep_freed_memory_for_reuse());
  constexpr size_t kBlock = size_t(100) << 20;  // a batch's activations at batch 1000
  size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(kBlock);
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before);  // not a fresh mmap
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, kBlock);  // kept, free for the next batch
}

}  // namespace allocator_test
}  // namespace kiln::cli
