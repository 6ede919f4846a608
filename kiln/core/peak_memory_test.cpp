// Memory freed by the process goes back to the system when asked: a server that read one huge
// request kept its peak for good (an outside campaign's find).

#include "kiln/core/peak_memory.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace kiln {
namespace peak_memory_test {

TEST(PeakMemory, FreedSmallBlocksGoBackToTheSystemWhenAsked) {
#if defined(__SANITIZE_ADDRESS__) || defined(KILN_SANITIZED_BUILD)  // CMakeLists.txt
  GTEST_SKIP() << "AddressSanitizer's allocator replaces glibc's malloc (make test-asan)";
#endif
  double before = resident_mb();
  ASSERT_GT(before, 0);
  std::unique_ptr<char[]> pin;  // above them in the heap: freeing them cannot shrink its top
  {
    // 200 MiB in blocks of 100 bytes, as a JSON tree of a million keys is: none is mmapped, and
    // freeing them leaves the heap's pages resident.
    std::vector<std::unique_ptr<char[]>> blocks(2 << 20);
    for (auto& block : blocks) {
      block.reset(new char[100]);
      block[0] = 1;
    }
    pin.reset(new char[100]);
    EXPECT_GT(resident_mb(), before + 150);
  }
  double freed = resident_mb();
  give_back_freed_memory();
  EXPECT_LT(resident_mb(), freed - 100) << "before " << before << " MiB, freed " << freed;
  EXPECT_GE(peak_resident_mb(), before + 150);
}

}  // namespace peak_memory_test
}  // namespace kiln
