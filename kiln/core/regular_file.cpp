#include "kiln/core/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "kiln/core/error.h"

namespace kiln {

size_t regular_file_size(int fd, const std::string& path) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw IoError("inspect", path, errno);
  if (!S_ISREG(status.st_mode))
    throw DataError(path, -1, -1,
                    S_ISDIR(status.st_mode)
                        ? "is a folder, not a file"
                        : "is not a regular file (a device, a pipe or a socket); kiln reads only "
                          "regular files");
  return static_cast<size_t>(status.st_size);
}

int open_regular_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw IoError("open", path, errno);
  try {
    regular_file_size(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace kiln
