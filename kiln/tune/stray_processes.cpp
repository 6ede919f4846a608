#include "kiln/tune/stray_processes.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "kiln/core/text_file.h"

namespace kiln::tune {
namespace fs = std::filesystem;
namespace {

// A children file lists pids of at most 7 digits and a space each.
constexpr size_t kMaxChildrenFileBytes = kMaxStrays * 8;

void add_listed(const std::string& text, std::vector<pid_t>& out) {
  const char* at = text.c_str();
  while (*at && out.size() < kMaxStrays) {
    char* end = nullptr;
    long pid = std::strtol(at, &end, 10);
    if (end == at) break;
    if (pid > 0) out.push_back(pid_t(pid));
    at = end;
  }
}

}  // namespace

// The keeper reads the same /proc files with code of its own (trial_keeper.cpp): it runs between
// fork and exec, where nothing may allocate; the study may, and reads them plainly.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code error;
  fs::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", error);
  for (; !error && tasks != fs::directory_iterator(); tasks.increment(error))
    add_listed(read_kernel_file(tasks->path().string() + "/children", kMaxChildrenFileBytes),
               children);
  return children;
}

size_t kill_strays(const std::set<pid_t>& keepers) {
  std::vector<pid_t> found;
  std::set<pid_t> seen;
  for (pid_t child : children_of(::getpid()))
    if (!keepers.count(child) && seen.insert(child).second) found.push_back(child);
  for (size_t next = 0; next < found.size() && found.size() < kMaxStrays; ++next)
    for (pid_t child : children_of(found[next]))
      if (seen.insert(child).second) found.push_back(child);
  for (pid_t pid : found) ::kill(pid, SIGKILL);
  return found.size();
}

StrayCatcher::StrayCatcher() {
  int already = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &already);
  was_subreaper_ = already != 0;
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
}

StrayCatcher::~StrayCatcher() {
  // Each round reaps one ended stray at least; what a killed stray started becomes a child here
  // as it dies, and is killed by the next round.
  while (kill_strays({}) > 0) {
    int status = 0;
    while (::waitpid(-1, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (!was_subreaper_) ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace kiln::tune
