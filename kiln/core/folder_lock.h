#pragma once
// A folder held by one kiln process at a time: its `lock` file locked (flock) for the object's
// life, with the holder's pid and host written in it for the message a second process gets. The
// kernel releases the lock when the process ends, however it ends (kill -9 included).
//
// A filesystem shared between machines may not carry flock from one to another (NFS mounted
// `nolock`): there the lock of a process on another machine looks free. So the holder also
// beats: a thread touches the lock file (its modification time) every `heartbeat`, and a reader on
// another machine takes a lock whose beat has stopped for kPresumedDeadAfter as let go.
// Thread-safety: one object per folder and process.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace kiln {

/// What a lock file says of the process that last held it.
struct LockRecord {
  std::string pid;                             // "" when the file says nothing
  std::string host;                            // "" in lock files written before hosts were
  std::chrono::system_clock::time_point beat;  // the file's modification time
};

class FolderLock {
 public:
  static constexpr std::chrono::seconds kHeartbeat{30};
  /// A beat this old says its holder is gone: six beats missed, with room for clocks that differ
  /// between machines by a minute.
  static constexpr std::chrono::seconds kPresumedDeadAfter{180};

  /// Locks `folder`/lock; when another process holds it, throws UsageError saying `busy`
  /// ("run R is being trained") with the holder's pid and host and what to do.
  FolderLock(const std::string& folder, const std::string& busy,
             std::chrono::milliseconds heartbeat = kHeartbeat);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  /// The holder of `folder` as its lock file names it ("4242 on node-3"), when a process of this
  /// machine (or one whose locks reach it) holds it; nothing when none does.
  static std::optional<std::string> holder(const std::string& folder);
  /// What `folder`'s lock file says, held or not; nothing when there is no lock file.
  static std::optional<LockRecord> record(const std::string& folder);
  /// Waits up to `timeout` for no process to hold `folder`; returns whether none does.
  static bool wait_until_free(const std::string& folder, std::chrono::milliseconds timeout);

 private:
  void beat_until_released(std::chrono::milliseconds heartbeat);

  int fd_ = -1;
  std::mutex mutex_;
  std::condition_variable released_;
  bool releasing_ = false;
  std::thread beating_;
};

/// This machine's host name, as lock files record it.
std::string this_host();

}  // namespace kiln
