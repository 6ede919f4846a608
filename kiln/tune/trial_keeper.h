#pragma once
// The keeper of a program's trial (tune.command): a process of its own between the study and the
// program, so that nothing the program starts outlives its trial or the study, even a process
// that left the program's group or session (`setsid`) and even after `kill -9` of the study.
//
// The keeper is a copy of the study made by fork() alone (no exec: starting kiln again cost
// 1.3-1.7 s and 178 MB per trial), and so does only what is safe between fork and exec: system
// calls on memory made before the fork. It
//   - is a child subreaper (PR_SET_CHILD_SUBREAPER): whatever the program starts and leaves
//     becomes its child, not init's, and stays in reach;
//   - starts the program, its output going where the study reads it;
//   - on the study's first SIGINT or SIGTERM, passes the signal to every process descended from
//     it, and kills them all (SIGKILL) once `kill_after` has passed; a second signal kills them
//     at once. The study's death (PR_SET_PDEATHSIG, SIGHUP, which Linux sends once per thread
//     of the study) counts as one SIGTERM;
//   - when the program ends, tells what it left SIGTERM and kills it at the same deadline;
//   - ends last, as the program ended (its exit status, or its signal), so the study records
//     the trial as before, once nothing of it is left.
// Descendants are found in /proc/PID/task/TID/children, at most kMaxKept per look.
// Torch-free. Linux only.

#include <sys/types.h>

#include <string>

namespace kiln::tune {

/// How a trial is kept: the grace period, and the lines the keeper says where the study does.
struct TrialKeeping {
  double kill_after = 30;       // seconds from being told to stop to SIGKILL
  int say_fd = 1;               // where the study writes its lines
  std::string told_and_stayed;  // a line: the program stayed after being told to stop
  std::string left_and_stayed;  // a line: what the program left stayed after it ended
};

/// What the keeper needs, all made before the fork.
struct KeeperPlan {
  char* const* argv = nullptr;  // the program's, argv[0] looked up in PATH
  char* const* envp = nullptr;
  int output_fd = -1;  // the program's standard output and error
  int report_fd = -1;  // close-on-exec; the program writes exec's errno here when it fails
  pid_t study = -1;
  const TrialKeeping* keeping = nullptr;
};

/// The keeper's life, in the child of a fork; it never returns. The signals SIGINT, SIGTERM,
/// SIGHUP and SIGCHLD must be blocked before the fork (the keeper waits for them).
[[noreturn]] void keep_trial(const KeeperPlan& plan);

}  // namespace kiln::tune
