#pragma once
// What a trial's keeper leaves should the keeper itself die (a program may well kill its parent):
// while a study runs programs it is a child subreaper, so the processes the keeper kept become
// the study's children rather than init's. The study's only children are keepers, so any other
// child is such a stray, and it is killed with all it started. Without this, a program that
// killed its keeper left its children running after the study ended.
// Torch-free. Linux only.

#include <sys/types.h>

#include <set>
#include <vector>

namespace kiln::tune {

/// The processes that `pid`'s threads started (/proc/PID/task/TID/children); none once it has
/// ended. At most kMaxStrays.
std::vector<pid_t> children_of(pid_t pid);

/// At most this many processes are found by one look; those past it by a later one.
constexpr size_t kMaxStrays = 65536;

/// Kills (SIGKILL) every child of this process that is not in `keepers`, and every process
/// descended from one (found first, then killed, so that none ending hides its children).
/// Returns how many were killed.
size_t kill_strays(const std::set<pid_t>& keepers);

/// Makes this process a child subreaper (prctl) while it lives. At its end the strays are
/// killed and reaped, and the process is an ordinary one again.
class StrayCatcher {
 public:
  StrayCatcher();
  ~StrayCatcher();
  StrayCatcher(const StrayCatcher&) = delete;
  StrayCatcher& operator=(const StrayCatcher&) = delete;

 private:
  bool was_subreaper_ = false;
};

}  // namespace kiln::tune
