#pragma once
// Whether what the board would read of a run stays inside its root, symbolic links followed: a
// run holding a link out of the root (notes.md -> a file elsewhere, an event file -> /etc) is
// not served, as a run reached through one is not (docs/observe.md).
//
// The runs table asks this of every run every two seconds: lstat of each file the board reads
// and two directory listings a run. RunLinks keeps the answer of a run that holds no link at all
// while its folder's and its event folders' times stay the same: an entry added, removed,
// renamed or replaced by a link changes its folder's status-change time, which cannot be set
// back. A folder changed within the last two seconds may change again within the same tick of
// the file system's clock, and a run holding a link may come to lead elsewhere through a folder
// it passes: both are looked at each time. A file served is looked at again when it is asked
// for (run_under), whatever was kept.
// Thread-safety: RunLinks may be used from several threads at once; the functions are pure.

#include <cstdint>
#include <filesystem>
#include <functional>
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
  /// `now`: the time in seconds since 1970 (the real clock when none), as file times count.
  explicit RunLinks(std::function<int64_t()> now = {});

  /// Whether every file of `run` the board reads (its own files, the event files under
  /// tensorboard/) lies under `base` (canonical), links followed.
  bool reads_stay_inside(const std::filesystem::path& base, const std::filesystem::path& run);
  /// The same, looked at afresh (nothing kept).
  static bool look(const std::filesystem::path& base, const std::filesystem::path& run);
  /// How many times reads_stay_inside looked at a run's files rather than keep its answer.
  size_t looks() const;

 private:
  struct Verdict {
    std::string folders;  // the folders' types and times when it was reached
    bool inside = false;
  };
  std::function<int64_t()> now_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Verdict> verdicts_;
  size_t looks_ = 0;
};

}  // namespace kiln::board
