#include "kiln/core/parent_death.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>

namespace kiln {

std::pair<std::string, std::string> parent_variable() {
  return {"KILN_PARENT_PID", std::to_string(::getpid())};
}

bool stop_with_parent() {
  const char* value = std::getenv("KILN_PARENT_PID");
  if (!value || !*value) return false;
  char* end = nullptr;
  long parent = std::strtol(value, &end, 10);
  if (*end != 0 || parent <= 0) return false;
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died between our start and the request: then we were reparented.
  if (::getppid() != pid_t(parent)) ::raise(SIGTERM);
  return true;
}

}  // namespace kiln
