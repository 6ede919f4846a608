#include "tests/support/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"

namespace kiln::testing {

CommandResult run_command(const std::string& command) {
  TempDir dir;
  std::string out_file = dir.file("stdout"), err_file = dir.file("stderr");
  int status = std::system((command + " >" + out_file + " 2>" + err_file).c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ostringstream out, err;
  out << std::ifstream(out_file).rdbuf();
  err << std::ifstream(err_file).rdbuf();
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace kiln::testing
