#include "kiln/core/parent_death.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>

namespace kiln {

std::pair<std::string, std::string> parent_variable() {
  return {"KILN_PARENT_PID", std::to_string(::getpid())};
}

void stop_with_parent() {
  const char* value = std::getenv("KILN_PARENT_PID");
  if (!value || !*value) return;
  char* end = nullptr;
  long parent = std::strtol(value, &end, 10);
  if (*end != 0 || parent <= 0) return;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // A launcher reads its workers' output through pipes, which break as it dies: the writes that
  // follow must fail quietly rather than kill the worker before its checkpoint is saved.
  ::signal(SIGPIPE, SIG_IGN);
  // The parent may have died between our start and the request: then we were reparented.
  if (::getppid() != pid_t(parent)) ::raise(SIGTERM);
}

}  // namespace kiln
