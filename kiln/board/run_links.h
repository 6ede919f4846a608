#pragma once
// Whether what the board would read of a run stays inside its root, symbolic links followed: a
// run holding a link out of the root (notes.md -> a file elsewhere, an event file -> /etc) is
// not served, as a run reached through one is not (docs/observe.md).
//
// The runs table asks this of every run every two seconds: lstat of each file the board reads
// and two directory listings a run. RunLinks keeps each run's answer while the modification
// times of its folder and its event folders stay the same (a file added, removed, renamed or
// replaced by a link changes its folder's time), once they are two seconds old: a folder changed
// within the file system clock's last tick may change again with the same time. A file served is
// looked at again when it is asked for (run_under), whatever was kept.
// Thread-safety: RunLinks may be used from several threads at once; the functions are pure.

#include <filesystem>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kiln::board {

/// Whether `path` is `root` or lies under it, both canonical.
bool is_within(const std::filesystem::path& root, const std::filesystem::path& path);

/// Whether `path` is no symbolic link, or one that resolves under `base` (canonical). A link
/// that resolves to nothing reads as a missing file.
bool stays_inside(const std::filesystem::path& base, const std::filesystem::path& path);

class RunLinks {
 public:
  /// Whether every file of `run` the board reads (its own files, the event files under
  /// tensorboard/) lies under `base` (canonical), links followed.
  bool reads_stay_inside(const std::filesystem::path& base, const std::filesystem::path& run);
  /// The same, looked at afresh (nothing kept).
  static bool look(const std::filesystem::path& base, const std::filesystem::path& run);

 private:
  struct Verdict {
    std::string folders;  // the folders' types and times when it was reached
    bool inside = false;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Verdict> verdicts_;
};

}  // namespace kiln::board
