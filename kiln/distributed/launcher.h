#pragma once
// `kiln launch` (docs/design.md §5, docs/distributed.md): starts the workers of one machine of a
// job, each a `kiln` process with the environment torchrun would give it (RANK, WORLD_SIZE,
// LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT), prefixes each line they
// write with their rank, forwards SIGINT and SIGTERM to them, and when one fails stops the others
// and, while restarts remain, starts them all again on `train --resume RUN_DIR` (the run folder
// the workers printed). Its status is the job's: 0 when every worker finished, else the first
// failure's (128 + the signal for a worker killed by one).
// Torch-free. Thread-safety: one launch per process (it owns SIGCHLD, SIGINT and SIGTERM).

#include <cstdio>
#include <string>
#include <vector>

namespace kiln::distributed {

struct LaunchPlan {
  std::string program;               // the kiln binary the workers run
  std::vector<std::string> command;  // its arguments: train CONFIG... [--set ...]
  int nproc = 1;                     // workers on this machine
  int nnodes = 1, node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;  // 0: a free port of this machine, picked anew for each attempt
  int max_restarts = 0;
  double grace_seconds = 30;  // between SIGTERM and SIGKILL for workers told to stop
};

/// A TCP port of this machine that nothing listens on now (the kernel's pick for port 0).
int free_port();

/// Runs the plan to its end; `out` gets the workers' stdout and the launcher's lines, `err` their
/// stderr, every line prefixed with `[rank R] `.
int launch(const LaunchPlan& plan, std::FILE* out, std::FILE* err);

/// What a restart runs: `train --resume RUN_DIR` for a train command whose run folder is known
/// (the command itself when it already resumes one), else the command as given.
std::vector<std::string> restart_command(const std::vector<std::string>& command,
                                         const std::string& run_dir);

/// The variables worker `local_rank` gets on top of the launcher's environment.
std::vector<std::pair<std::string, std::string>> worker_variables(const LaunchPlan& plan,
                                                                  int local_rank, int port,
                                                                  int attempt);

}  // namespace kiln::distributed
