#pragma once
// A folder held by one kiln process at a time: its `lock` file locked (flock) for the object's
// life, with the holder's pid written in it for the message a second process gets. The kernel
// releases the lock when the process ends, however it ends (kill -9 included).
// Thread-safety: one object per folder and process.

#include <chrono>
#include <optional>
#include <string>

namespace kiln {

class FolderLock {
 public:
  /// Locks `folder`/lock; when another process holds it, throws UsageError saying `busy`
  /// ("run R is being trained") with the holder's pid and what to do.
  FolderLock(const std::string& folder, const std::string& busy);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  /// The pid (as its lock file says) of the process holding `folder`; nothing when none does.
  static std::optional<std::string> holder(const std::string& folder);
  /// Waits up to `timeout` for no process to hold `folder`; returns whether none does.
  static bool wait_until_free(const std::string& folder, std::chrono::milliseconds timeout);

 private:
  int fd_ = -1;
};

}  // namespace kiln
