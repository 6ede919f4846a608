#pragma once
// Runs a shell command and captures what it printed and its exit code, for end-to-end tests of
// the kiln binary.

#include <cstdio>
#include <string>

namespace kiln::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

/// Runs `command` through /bin/sh.
CommandResult run_command(const std::string& command);

/// A command running in the background whose stdout is read line by line, so a test can act at
/// a moment the command's own output marks (no sleeps). stderr goes to the test's stderr.
class ChildProcess {
 public:
  explicit ChildProcess(const std::string& command);
  ~ChildProcess();  // kills and reaps the child if still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// The next line of stdout (without its newline); false at the end of the output.
  bool read_line(std::string& line);
  /// Sends `signal` to the child.
  void signal(int signal);
  /// Waits for the child to end; its exit code, or 128 + the signal that ended it.
  int wait();

 private:
  int pid_ = -1;
  std::FILE* out_ = nullptr;
  int exit_code_ = -1;
};

}  // namespace kiln::testing
