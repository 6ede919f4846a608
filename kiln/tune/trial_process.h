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

#include "kiln/tune/trial_keeper.h"

namespace kiln::tune {

struct TrialCommand {
  std::string program;
  std::vector<std::string> arguments;
  std::vector<std::pair<std::string, std::string>> environment;  // on top of this process's
  std::string log;                                               // stdout and stderr, appended
};

/// Starts `command`; throws Error when it cannot be started.
pid_t start_trial_process(const TrialCommand& command);

/// Starts a program of the user's (tune.command; `command.program` looked up in PATH) under a
/// keeper of its own (trial_keeper.h), whose pid it returns: the keeper ends as the program did,
/// once nothing the program started is left, and stops all of it when told to or when the study
/// dies. The program's stdout and stderr go to a pipe whose read end it returns in `output`
/// (`command.log` is not opened). Error when it cannot be started (a program not found, say).
pid_t start_program_process(const TrialCommand& command, const TrialKeeping& keeping, int* output);

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
/// longer for trials that ignore the first. A keeper is sent each signal itself, and kills its
/// trial at the second.
class SignalsToTrials {
 public:
  enum class Delivery { kToGroup, kToKeeper };
  SignalsToTrials();
  ~SignalsToTrials();
  SignalsToTrials(const SignalsToTrials&) = delete;
  SignalsToTrials& operator=(const SignalsToTrials&) = delete;
  void add(pid_t pid, Delivery delivery = Delivery::kToGroup);
  void remove(pid_t pid);
  /// The first signal received, 0 when none.
  int received() const;
  /// How many signals it has received.
  int count() const;
};

}  // namespace kiln::tune
