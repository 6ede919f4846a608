#include "kiln/board/run_links.h"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>

#include "kiln/run/run_directory.h"
#include "kiln/run/run_info.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

bool stays_inside(const fs::path& base, const fs::path& path, fs::file_status status) {
  if (!fs::is_symlink(status)) return true;
  std::error_code error;
  fs::path target = fs::canonical(path, error);
  return error || is_within(base, target);
}

// A folder changed this recently may change again within the same tick of the file system's
// clock (a few milliseconds) without its time changing: a verdict on it is not kept.
constexpr int64_t kSettledSeconds = 2;

// The run's folder's and its event folders' types and modification times, as lstat gives them
// ("-" for one missing): what a verdict on their entries holds for; `newest` gets the latest
// time, in seconds.
std::string folders_signature(const fs::path& run, int64_t& newest) {
  fs::path events = run / run::kTensorBoardFolder;
  std::string signature;
  newest = 0;
  for (const fs::path& folder : {run, events, events / "train", events / "val"}) {
    struct stat status {};
    if (::lstat(folder.c_str(), &status) != 0) {
      signature += "-;";
      continue;
    }
    newest = std::max<int64_t>(newest, status.st_mtim.tv_sec);
    signature += std::to_string(status.st_mode) + "." + std::to_string(status.st_mtim.tv_sec) +
                 "." + std::to_string(status.st_mtim.tv_nsec) + ";";
  }
  return signature;
}

}  // namespace

bool is_within(const fs::path& root, const fs::path& path) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

bool stays_inside(const fs::path& base, const fs::path& path) {
  std::error_code error;
  return stays_inside(base, path, fs::symlink_status(path, error));
}

bool RunLinks::reads_stay_inside(const fs::path& base, const fs::path& run) {
  int64_t newest = 0;
  std::string folders = folders_signature(run, newest);
  std::string key = base.string() + "\n" + run.string();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = verdicts_.find(key);
    if (found != verdicts_.end() && found->second.folders == folders) return found->second.inside;
  }
  bool inside = look(base, run);
  std::lock_guard<std::mutex> lock(mutex_);
  if (newest < int64_t(std::time(nullptr)) - kSettledSeconds)
    verdicts_[key] = {folders, inside};
  else
    verdicts_.erase(key);
  return inside;
}

bool RunLinks::look(const fs::path& base, const fs::path& run) {
  for (const std::string& name : run::files_read())
    if (!stays_inside(base, run / name)) return false;
  fs::path events = run / run::kTensorBoardFolder;
  if (!stays_inside(base, events)) return false;
  for (const char* split : {"train", "val"}) {
    fs::path folder = events / split;
    if (!stays_inside(base, folder)) return false;
    std::error_code error;
    for (fs::directory_iterator at(folder, error), end; !error && at != end; at.increment(error)) {
      std::error_code unknown;
      if (!stays_inside(base, at->path(), at->symlink_status(unknown))) return false;
    }
  }
  return true;
}

}  // namespace kiln::board
