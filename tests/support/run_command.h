#pragma once
// Runs a shell command and captures what it printed and its exit code, for end-to-end tests of
// the kiln binary.

#include <string>

namespace kiln::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

/// Runs `command` through /bin/sh.
CommandResult run_command(const std::string& command);

}  // namespace kiln::testing
