#include "kiln/board/run_links.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>

#include "kiln/run/run_directory.h"
#include "kiln/run/run_info.h"

namespace kiln::board {
namespace {

namespace fs = std::filesystem;

// What a run's files were found to be: inside the root or not, and whether any was a link.
struct Look {
  bool inside = true;
  bool linked = false;
};

void look_at(const fs::path& base, const fs::path& path, fs::file_status status, Look& look) {
  if (!look.inside || !fs::is_symlink(status)) return;
  look.linked = true;
  std::error_code error;
  fs::path target = fs::canonical(path, error);
  look.inside = error || is_within(base, target);  // one that resolves to nothing: missing
}

// A folder changed this recently may change again within the same tick of the file system's
// clock (a few milliseconds) without its times changing: a verdict on it is not kept.
constexpr int64_t kSettledSeconds = 2;

// The run's folder's and its event folders' types, modification and status-change times, as
// lstat gives them ("-" for one missing): what a verdict on their entries holds for. The
// status-change time moves with any change of a folder's entries and cannot be set back (touch
// sets the modification time back, and moves this one). `newest` gets the latest, in seconds.
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
    newest = std::max<int64_t>({newest, status.st_mtim.tv_sec, status.st_ctim.tv_sec});
    signature += fmt::format("{}.{}.{}.{}.{};", status.st_mode, status.st_mtim.tv_sec,
                             status.st_mtim.tv_nsec, status.st_ctim.tv_sec, status.st_ctim.tv_nsec);
  }
  return signature;
}

Look look_at_run(const fs::path& base, const fs::path& run) {
  Look look;
  std::error_code error;
  for (const std::string& name : run::files_read())
    look_at(base, run / name, fs::symlink_status(run / name, error), look);
  fs::path events = run / run::kTensorBoardFolder;
  look_at(base, events, fs::symlink_status(events, error), look);
  for (const char* split : {"train", "val"}) {
    fs::path folder = events / split;
    look_at(base, folder, fs::symlink_status(folder, error), look);
    for (fs::directory_iterator at(folder, error), end; look.inside && !error && at != end;
         at.increment(error)) {
      std::error_code unknown;
      look_at(base, at->path(), at->symlink_status(unknown), look);
    }
  }
  return look;
}

}  // namespace

bool is_within(const fs::path& root, const fs::path& path) {
  auto [root_end, ignored] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

bool stays_inside(const fs::path& base, const fs::path& path) {
  std::error_code error;
  Look look;
  look_at(base, path, fs::symlink_status(path, error), look);
  return look.inside;
}

RunLinks::RunLinks(std::function<int64_t()> now) : now_(std::move(now)) {
  if (!now_) now_ = [] { return int64_t(std::time(nullptr)); };
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
  Look look = look_at_run(base, run);
  std::lock_guard<std::mutex> lock(mutex_);
  ++looks_;
  // A run holding a link is looked at each time: where a link inside the root leads may change
  // without any change to the run's own folders (a folder it passes through becomes a link).
  if (!look.linked && newest < now_() - kSettledSeconds)
    verdicts_[key] = {folders, look.inside};
  else
    verdicts_.erase(key);
  return look.inside;
}

bool RunLinks::look(const fs::path& base, const fs::path& run) {
  return look_at_run(base, run).inside;
}

size_t RunLinks::looks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return looks_;
}

}  // namespace kiln::board
