#include "kiln/core/peak_memory.h"

#include <sys/resource.h>

namespace kiln {

double peak_resident_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports kilobytes
}

}  // namespace kiln
