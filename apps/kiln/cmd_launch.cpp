// kiln launch --nproc N [--nnodes M --node-rank R --master HOST:PORT] [--max-restarts K]
//             -- train CONFIG...

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/distributed/launcher.h"
#include "kiln/distributed/rendezvous.h"

namespace kiln::cli {
namespace {

struct LaunchArgs {
  distributed::LaunchPlan plan;
  std::string master;
};

int run_launch(LaunchArgs args) {
  distributed::LaunchPlan& plan = args.plan;
  if (plan.command.empty()) throw UsageError("kiln launch needs a command: -- train CONFIG...");
  if (plan.node_rank >= plan.nnodes)
    throw UsageError("--node-rank " + std::to_string(plan.node_rank) + " is not below --nnodes " +
                     std::to_string(plan.nnodes));
  if (!args.master.empty()) {
    auto master = distributed::host_and_port(args.master);
    if (!master)
      throw UsageError("--master " + args.master + ": give HOST:PORT, the port rank 0 listens on");
    std::tie(plan.master_addr, plan.master_port) = *master;
  } else if (plan.nnodes > 1) {
    throw UsageError("--nnodes above 1 needs --master HOST:PORT: where rank 0's machine listens");
  }
  plan.program = this_program();
  return distributed::launch(plan, stdout, stderr);
}

}  // namespace

void add_launch_command(CLI::App& app, Action& action) {
  auto* command = app.add_subcommand(
      "launch", "Run a distributed job's workers on this machine (docs/distributed.md)");
  auto args = std::make_shared<LaunchArgs>();
  distributed::LaunchPlan& plan = args->plan;
  command->add_option("--nproc", plan.nproc, "Workers on this machine")
      ->required()
      ->check(CLI::Range(1, 1024));
  command->add_option("--nnodes", plan.nnodes, "Machines in the job")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  command->add_option("--node-rank", plan.node_rank, "This machine's place among them")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--master", args->master,
                      "HOST:PORT of rank 0's store (default: this machine, a free port)");
  command
      ->add_option("--max-restarts", plan.max_restarts,
                   "Times to start the workers again, from the last checkpoint, after one fails")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("command", plan.command, "After --: the kiln command each worker runs");
  command->callback([&action, args] { action = [args] { return run_launch(*args); }; });
}

}  // namespace kiln::cli
