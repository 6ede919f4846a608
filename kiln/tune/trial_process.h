#pragma once
// The processes of a study's trials: each `kiln train` runs in its own process group with its
// output going to a log file, and the study waits for whichever ends first. While a study runs,
// SIGINT and SIGTERM are passed to every trial (each saves a checkpoint and stops, as a run
// does) and noted, so the study stops starting trials.
// Torch-free. Thread-safety: one study per process (it owns SIGINT and SIGTERM while it runs).

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::tune {

struct TrialCommand {
  std::string program;
  std::vector<std::string> arguments;
  std::vector<std::pair<std::string, std::string>> environment;  // on top of this process's
  std::string log;                                               // stdout and stderr, appended
};

/// Starts `command`; throws Error when it cannot be started.
pid_t start_trial_process(const TrialCommand& command);

/// Starts a program of the user's (tune.command; `command.program` looked up in PATH) in its own
/// process group, its stdout and stderr going to a pipe whose read end it returns in `output`
/// (`command.log` is not opened). Linux sends it SIGTERM when the study dies, however it dies
/// (PR_SET_PDEATHSIG), as kiln's own trials stop with their study. Error when it cannot be
/// started (a program not found, say).
pid_t start_program_process(const TrialCommand& command, int* output);

struct EndedProcess {
  pid_t pid = -1;
  int status = 0;  // as waitpid gives it
};

/// Waits for a child to end; nullopt when a signal came first.
std::optional<EndedProcess> wait_for_a_trial();
/// A child that has ended, without waiting; nullopt when none has.
std::optional<EndedProcess> reap_a_trial();

/// "exited with status 3", "was killed by signal 9 (Killed)".
std::string process_ending(int status);

/// Passes SIGINT and SIGTERM on to the process groups of the trials it is told of, while it lives;
/// from the second signal on it kills them (SIGKILL): a user who presses Ctrl-C twice waits no
/// longer for trials that ignore the first.
class SignalsToTrials {
 public:
  SignalsToTrials();
  ~SignalsToTrials();
  SignalsToTrials(const SignalsToTrials&) = delete;
  SignalsToTrials& operator=(const SignalsToTrials&) = delete;
  void add(pid_t pid);
  void remove(pid_t pid);
  /// The first signal received, 0 when none.
  int received() const;
  /// How many signals it has received.
  int count() const;
};

}  // namespace kiln::tune
