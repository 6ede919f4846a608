#pragma once
// Where a process stands in a training job, read from the environment its launcher gave it
// (docs/formats.md §5): torchrun, torch's env:// and Kubeflow's PyTorchJob (`RANK`,
// `WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `GROUP_RANK`),
// `kiln launch` (the same variables), Slurm (`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`,
// the first host of `SLURM_JOB_NODELIST`), or a TensorFlow cluster (`TF_CONFIG`: the chief, or
// master, is rank 0 and worker i the next ranks; parameter servers and evaluators have no place,
// as kiln replaces them with all-reduce). Rank 0 hosts the store every rank meets at, on
// MASTER_ADDR:MASTER_PORT.
// Torch-free. Thread-safety: pure functions.

#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace kiln::distributed {

struct Rendezvous {
  int rank = 0, world_size = 1;
  int local_rank = 0, local_world_size = 1;  // on this machine
  int node_rank = 0;                         // which machine (torchrun's GROUP_RANK)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source;  // which convention it came from: "torchrun", "slurm", "TF_CONFIG"
  // Under torchrun's agent (TORCHELASTIC_USE_AGENT_STORE=True) the agent hosts the store and
  // every rank is its client, keys under /worker/attempt_<restart count>/, as torch's env://.
  bool agent_store = false;
  std::string store_prefix;
};

/// A variable of the environment, or nothing when it is not set.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
/// The process's own environment (getenv).
Environment process_environment();

/// The job `env` describes: nothing when it describes none (a process training alone). A
/// UsageError naming the variable when one is malformed or they disagree (a rank beyond the
/// world, a port out of range, a TF_CONFIG task of type `ps` or `evaluator`, ...).
std::optional<Rendezvous> rendezvous_from(const Environment& env);

/// HOST and PORT of "HOST:PORT" (the port 1 to 65535), or nothing when it is not that.
std::optional<std::pair<std::string, int>> host_and_port(const std::string& address);

/// The first host of a Slurm host list: `node[07-09,12],gpu1` gives `node07`.
std::string first_slurm_host(const std::string& node_list);

}  // namespace kiln::distributed
