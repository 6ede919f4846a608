#include "kiln/core/peak_memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace kiln {

double peak_resident_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports kilobytes
}

double resident_mb() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) /
         (1024.0 * 1024.0);
}

void give_back_freed_memory() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

}  // namespace kiln
