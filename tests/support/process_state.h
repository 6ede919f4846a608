#pragma once
// Whether a process has ended, for tests that check that nothing of a trial outlives it.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

namespace kiln::testing {

/// Gone, or a zombie no one has reaped yet. /proc/PID/stat is read with read(2): it may vanish
/// as it is read, and a stream throws then.
inline bool process_ended(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return true;
  char stat[512];
  ssize_t size = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (size <= 0) return true;
  std::string text(stat, size_t(size));
  size_t name_end = text.rfind(')');
  return name_end != std::string::npos && text.substr(name_end + 2, 1) == "Z";
}

}  // namespace kiln::testing
