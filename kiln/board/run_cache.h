#pragma once
// What the board knows of each run, kept between requests: a run is read again only when one of
// the files it is read from changed (size or modification time), or when it says it is running
// (whether its process still holds the run's lock changes no file). The page asks for the table
// every 2 s; over two thousand finished runs that is a few thousand stat() calls instead of two
// thousand config.yaml files parsed each time.
// Thread-safety: read() may be called from several threads at once.

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/run/run_info.h"

namespace kiln::board {

class RunCache {
 public:
  /// Reads again each of `paths` whose files changed or that says it is running, and returns
  /// the cache's generation: the same as the last call's when nothing was read again and the
  /// paths are the same, so that what was made of them then still holds.
  uint64_t refresh(const std::vector<std::string>& paths);
  /// run::read_run of each path as the cache holds it (refresh() first).
  std::vector<run::RunInfo> runs(const std::vector<std::string>& paths);
  /// refresh(), then runs().
  std::vector<run::RunInfo> read(const std::vector<std::string>& paths);

 private:
  struct Entry {
    std::string signature;
    run::RunInfo info;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> entries_;
  std::vector<std::string> last_paths_;
  uint64_t generation_ = 0;
};

}  // namespace kiln::board
