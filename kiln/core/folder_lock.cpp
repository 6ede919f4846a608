#include "kiln/core/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"

namespace kiln {

FolderLock::FolderLock(const std::string& folder, const std::string& busy) {
  std::string path = folder + "/lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("open", path, errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    ::close(fd_);
    if (error != EWOULDBLOCK) throw IoError("lock", path, error);
    std::string holder = read_text_line(path);
    throw UsageError(busy + " by another kiln process" +
                     (holder.empty() ? "" : " (pid " + holder + ")") +
                     "; wait for it to end, or stop it first");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid only makes the message above clearer; the lock holds without it.
  }
}

FolderLock::~FolderLock() { ::close(fd_); }

std::optional<std::string> FolderLock::holder(const std::string& folder) {
  std::string path = folder + "/lock";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // never locked
  // A shared lock is refused only while some process holds the exclusive one.
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (!held) return std::nullopt;
  std::string pid = read_text_line(path);
  return pid.empty() ? "?" : pid;
}

bool FolderLock::wait_until_free(const std::string& folder, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (holder(folder)) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

}  // namespace kiln
