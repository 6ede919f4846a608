#include "kiln/core/folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "kiln/core/error.h"
#include "kiln/core/text_file.h"

namespace kiln {
namespace {

// "4242 on node-3" from a lock file's "4242 node-3" ("4242" from one of before hosts).
std::string holder_text(const std::string& line) {
  size_t space = line.find(' ');
  return space == std::string::npos ? line
                                    : line.substr(0, space) + " on " + line.substr(space + 1);
}

}  // namespace

std::string this_host() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

FolderLock::FolderLock(const std::string& folder, const std::string& busy,
                       std::chrono::milliseconds heartbeat) {
  std::string path = folder + "/lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw IoError("open", path, errno);
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    ::close(fd_);
    if (error != EWOULDBLOCK) throw IoError("lock", path, error);
    std::string holder = read_text_line(path);
    throw UsageError(busy + " by another kiln process" +
                     (holder.empty() ? "" : " (pid " + holder_text(holder) + ")") +
                     "; wait for it to end, or stop it first");
  }
  std::string owner = std::to_string(::getpid()) + " " + this_host() + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, owner.data(), owner.size(), 0) < 0) {
    // The owner only makes the messages clearer; the lock holds without it.
  }
  beating_ = std::thread([this, heartbeat] { beat_until_released(heartbeat); });
}

FolderLock::~FolderLock() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    releasing_ = true;
  }
  released_.notify_all();
  beating_.join();
  ::close(fd_);
}

void FolderLock::beat_until_released(std::chrono::milliseconds heartbeat) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!released_.wait_for(lock, heartbeat, [this] { return releasing_; }))
    ::futimens(fd_, nullptr);  // a failed beat is retried at the next; the lock holds regardless
}

std::optional<std::string> FolderLock::holder(const std::string& folder) {
  std::string path = folder + "/lock";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // never locked
  // A shared lock is refused only while some process holds the exclusive one.
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (!held) return std::nullopt;
  std::string owner = read_text_line(path);
  return owner.empty() ? "?" : holder_text(owner);
}

std::optional<LockRecord> FolderLock::record(const std::string& folder) {
  std::string path = folder + "/lock";
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
  LockRecord record;
  record.beat = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(status.st_mtim.tv_sec) +
          std::chrono::nanoseconds(status.st_mtim.tv_nsec)));
  std::string line;
  try {
    line = read_text_line(path);
  } catch (const Error&) {  // a damaged lock file still tells its beat
  }
  size_t space = line.find(' ');
  record.pid = line.substr(0, space);
  if (space != std::string::npos) record.host = line.substr(space + 1);
  return record;
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
