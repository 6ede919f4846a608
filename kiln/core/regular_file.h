#pragma once
// Opening a file kiln reads as a regular file and nothing else. A FIFO opened for reading waits
// for a writer forever (the open itself blocks), and a device such as /dev/zero reads without
// end: both are refused by name, never waited on.
// Thread-safety: pure functions of the file system.

#include <cstddef>
#include <string>

namespace kiln {

/// Opens `path` read-only (O_CLOEXEC; O_NONBLOCK for the open alone, so that a FIFO does not
/// wait: reads then block as on any file) and checks it is a regular file. Returns the
/// descriptor; throws IoError when it cannot be opened, DataError naming `path` when it is a
/// folder, a device, a pipe or a socket.
int open_regular_file(const std::string& path);

/// The size of the opened `fd`, which must be a regular file (DataError naming `path` if not).
size_t regular_file_size(int fd, const std::string& path);

}  // namespace kiln
