#include "tests/support/run_command.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

ChildProcess::ChildProcess(const std::string& command) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    // exec, not /bin/sh -c alone: the signal must reach kiln itself, not a shell around it.
    ::execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  out_ = ::fdopen(pipe_fds[0], "r");
}

ChildProcess::~ChildProcess() {
  if (exit_code_ < 0 && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    wait();
  }
  if (out_) std::fclose(out_);
}

bool ChildProcess::read_line(std::string& line) {
  line.clear();
  for (int c = std::fgetc(out_); c != EOF; c = std::fgetc(out_)) {
    if (c == '\n') return true;
    line += static_cast<char>(c);
  }
  return !line.empty();
}

void ChildProcess::signal(int signal) { ::kill(pid_, signal); }

int ChildProcess::wait() {
  if (exit_code_ >= 0) return exit_code_;
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

}  // namespace kiln::testing
