#include "kiln/board/run_cache.h"

namespace kiln::board {
namespace {

bool says_running(const run::RunInfo& info) {
  return info.status == "running" || info.status == "killed";
}

}  // namespace

uint64_t RunCache::refresh(const std::vector<std::string>& paths) {
  std::vector<std::string> signatures(paths.size()), stale;
  std::vector<size_t> stale_at;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < paths.size(); ++i) {
      signatures[i] = run::run_files_signature(paths[i]);
      auto found = entries_.find(paths[i]);
      if (found == entries_.end() || found->second.signature != signatures[i] ||
          says_running(found->second.info)) {
        stale.push_back(paths[i]);
        stale_at.push_back(i);
      }
    }
  }
  std::vector<run::RunInfo> fresh = run::read_runs(stale);  // unlocked: this is the slow part
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t j = 0; j < fresh.size(); ++j)
    entries_[paths[stale_at[j]]] = {signatures[stale_at[j]], std::move(fresh[j])};
  if (!stale.empty() || paths != last_paths_) ++generation_;
  last_paths_ = paths;
  return generation_;
}

std::vector<run::RunInfo> RunCache::runs(const std::vector<std::string>& paths) {
  std::vector<run::RunInfo> runs;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string& path : paths) {
    auto found = entries_.find(path);
    runs.push_back(found != entries_.end() ? found->second.info : run::read_run(path));
  }
  return runs;
}

std::vector<run::RunInfo> RunCache::read(const std::vector<std::string>& paths) {
  refresh(paths);
  return runs(paths);
}

}  // namespace kiln::board
