#include "kiln/distributed/rendezvous.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <vector>

#include "kiln/core/error.h"
#include "kiln/core/json.h"
#include "kiln/core/json_text.h"

namespace kiln::distributed {
namespace {

UsageError bad_variable(const std::string& name, const std::string& value,
                        const std::string& problem) {
  return UsageError(fmt::format("environment variable {}={}: {}", name, value, problem));
}

// A whole decimal number at least `least`, or nothing when `name` is not set.
std::optional<int> integer_variable(const Environment& env, const std::string& name,
                                    int least = 0) {
  std::optional<std::string> text = env(name);
  if (!text) return std::nullopt;
  int value = 0;
  auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || error != std::errc() || end != text->data() + text->size())
    throw bad_variable(name, *text, "not a whole number");
  if (value < least) throw bad_variable(name, *text, fmt::format("must be at least {}", least));
  return value;
}

int port_variable(const Environment& env, const std::string& name, int fallback) {
  std::optional<int> port = integer_variable(env, name, 1);
  if (port && *port > 65535) throw bad_variable(name, *env(name), "a port is at most 65535");
  return port.value_or(fallback);
}

void check_rank(const Rendezvous& job, const std::string& rank_name,
                const std::string& world_name) {
  if (job.rank >= job.world_size)
    throw UsageError(fmt::format("environment: rank {} ({}) is not below the world size {} ({})",
                                 job.rank, rank_name, job.world_size, world_name));
  if (job.local_rank >= job.local_world_size)
    throw UsageError(
        fmt::format("environment: local rank {} is not below the ranks on this machine, {}",
                    job.local_rank, job.local_world_size));
}

// torchrun, torch's env:// and `kiln launch`: RANK and WORLD_SIZE, rank 0's store at
// MASTER_ADDR:MASTER_PORT.
std::optional<Rendezvous> torchrun_job(const Environment& env) {
  std::optional<int> rank = integer_variable(env, "RANK");
  std::optional<int> world = integer_variable(env, "WORLD_SIZE", 1);
  if (!rank && !world) return std::nullopt;
  if (!rank || !world)
    throw UsageError(fmt::format("environment: {} is set but {} is not; a job needs both",
                                 rank ? "RANK" : "WORLD_SIZE", rank ? "WORLD_SIZE" : "RANK"));
  Rendezvous job;
  job.source = "torchrun";
  job.rank = *rank;
  job.world_size = *world;
  job.local_rank = integer_variable(env, "LOCAL_RANK").value_or(0);
  job.local_world_size = integer_variable(env, "LOCAL_WORLD_SIZE", 1).value_or(1);
  job.node_rank = integer_variable(env, "GROUP_RANK").value_or(0);
  job.master_addr = env("MASTER_ADDR").value_or("127.0.0.1");
  if (job.world_size > 1 && !env("MASTER_PORT"))
    throw UsageError(
        "environment: WORLD_SIZE is above 1 but MASTER_PORT is not set: the port of rank 0's "
        "store (with MASTER_ADDR, its host)");
  job.master_port = port_variable(env, "MASTER_PORT", job.master_port);
  check_rank(job, "RANK", "WORLD_SIZE");
  if (env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True") {
    std::optional<int> attempt = integer_variable(env, "TORCHELASTIC_RESTART_COUNT");
    if (!attempt)
      throw UsageError(
          "environment: TORCHELASTIC_USE_AGENT_STORE=True but TORCHELASTIC_RESTART_COUNT is not "
          "set: the agent's store keeps each attempt's keys apart by it");
    job.agent_store = true;
    job.store_prefix = "/worker/attempt_" + std::to_string(*attempt);
  }
  return job;
}

// The tasks of one node, from SLURM_NTASKS_PER_NODE or the first count of SLURM_TASKS_PER_NODE
// ("2(x3),1": two tasks on each of three nodes, then one).
int slurm_tasks_per_node(const Environment& env) {
  if (std::optional<int> given = integer_variable(env, "SLURM_NTASKS_PER_NODE", 1)) return *given;
  std::optional<std::string> tasks = env("SLURM_TASKS_PER_NODE");
  if (!tasks) return 1;
  int count = 0;
  auto [end, error] = std::from_chars(tasks->data(), tasks->data() + tasks->size(), count);
  if (error != std::errc() || count < 1)
    throw bad_variable("SLURM_TASKS_PER_NODE", *tasks, "does not begin with a task count");
  return count;
}

// A task of a Slurm job step, started by srun, which sets SLURM_STEP_ID (SLURM_STEPID before
// Slurm 20): the batch script itself is no task of a step and trains alone, though it sees the
// allocation's SLURM_NTASKS.
std::optional<Rendezvous> slurm_job(const Environment& env) {
  bool in_step = env("SLURM_STEP_ID") || env("SLURM_STEPID");
  if (!in_step || !env("SLURM_PROCID") || !env("SLURM_NTASKS")) return std::nullopt;
  Rendezvous job;
  job.source = "slurm";
  job.rank = *integer_variable(env, "SLURM_PROCID");
  job.world_size = *integer_variable(env, "SLURM_NTASKS", 1);
  job.local_rank = integer_variable(env, "SLURM_LOCALID").value_or(0);
  job.local_world_size = slurm_tasks_per_node(env);
  job.node_rank = integer_variable(env, "SLURM_NODEID").value_or(0);
  std::optional<std::string> nodes = env("SLURM_JOB_NODELIST");
  if (!nodes) nodes = env("SLURM_NODELIST");
  job.master_addr = env("MASTER_ADDR").value_or(nodes ? first_slurm_host(*nodes) : "127.0.0.1");
  job.master_port = port_variable(env, "MASTER_PORT", job.master_port);
  check_rank(job, "SLURM_PROCID", "SLURM_NTASKS");
  return job;
}

std::pair<std::string, int> host_and_port(const std::string& address, const std::string& where) {
  std::optional<std::pair<std::string, int>> parsed = distributed::host_and_port(address);
  if (!parsed)
    throw UsageError(fmt::format("TF_CONFIG: {} is \"{}\", not HOST:PORT", where, address));
  return *parsed;
}

// The addresses of one task type of TF_CONFIG's cluster.
std::vector<std::string> cluster_tasks(const Json& cluster, const std::string& type) {
  std::vector<std::string> addresses;
  if (!cluster.contains(type)) return addresses;
  const Json& list = cluster.at(type);
  if (!list.is_array())
    throw UsageError(fmt::format("TF_CONFIG: cluster.{} must be a list of HOST:PORT", type));
  for (const Json& address : list) {
    if (!address.is_string())
      throw UsageError(fmt::format("TF_CONFIG: cluster.{} must be a list of HOST:PORT", type));
    addresses.push_back(address.get<std::string>());
  }
  return addresses;
}

Json tf_config_json(const std::string& text) {
  try {
    Json config = parse_json_text(text);
    if (config.is_object()) return config;
  } catch (const JsonTextError& e) {
    throw UsageError(fmt::format("TF_CONFIG is not JSON: {}", e.what()));
  }
  throw UsageError("TF_CONFIG must be a JSON object with \"cluster\" and \"task\"");
}

std::pair<std::string, int> tf_task(const Json& config) {
  const Json task = config.value("task", Json::object());
  if (!task.is_object() || !task.contains("type") || !task["type"].is_string())
    throw UsageError("TF_CONFIG: task.type must name this task's type (chief, master or worker)");
  int index = 0;
  if (task.contains("index")) {
    if (!task["index"].is_number_integer() || task["index"].get<int64_t>() < 0 ||
        task["index"].get<int64_t>() > 65535)
      throw UsageError("TF_CONFIG: task.index must be a whole number from 0 to 65535");
    index = task["index"].get<int>();
  }
  return {task["type"].get<std::string>(), index};
}

// A TensorFlow cluster: the chief (or master, Estimator's name for it) is rank 0, worker i rank
// i + 1 (i without a chief), as Kubeflow's PyTorchJob ranks its master and workers.
std::optional<Rendezvous> tf_config_job(const Environment& env) {
  std::optional<std::string> text = env("TF_CONFIG");
  if (!text) return std::nullopt;
  Json config = tf_config_json(*text);
  auto [type, index] = tf_task(config);
  if (type == "ps" || type == "evaluator")
    throw UsageError(fmt::format(
        "TF_CONFIG: this task is a{} {}; kiln trains data-parallel with all-reduce among the chief "
        "and workers, and has no parameter servers or side evaluators: give this task no "
        "TF_CONFIG-driven kiln train, or leave it out of the cluster",
        type == "ps" ? "" : "n", type));
  const Json cluster = config.value("cluster", Json::object());
  if (!cluster.is_object()) throw UsageError("TF_CONFIG: cluster must be an object");
  std::vector<std::string> chiefs = cluster_tasks(cluster, "chief");
  std::vector<std::string> masters = cluster_tasks(cluster, "master");
  if (chiefs.size() + masters.size() > 1)
    throw UsageError("TF_CONFIG: a cluster has at most one chief (or master)");
  chiefs.insert(chiefs.end(), masters.begin(), masters.end());
  std::vector<std::string> tasks = chiefs;
  std::vector<std::string> workers = cluster_tasks(cluster, "worker");
  tasks.insert(tasks.end(), workers.begin(), workers.end());
  int rank = 0;
  if (type == "chief" || type == "master") {
    if (chiefs.empty() || index != 0)
      throw UsageError(fmt::format("TF_CONFIG: task {} {} is not in the cluster", type, index));
  } else if (type == "worker") {
    if (index >= int(workers.size()))
      throw UsageError(
          fmt::format("TF_CONFIG: task worker {} is not in the cluster, which has {} "
                      "worker(s)",
                      index, workers.size()));
    rank = index + int(chiefs.size());
  } else {
    throw UsageError(fmt::format(
        "TF_CONFIG: task.type \"{}\" is none of chief, master, worker (or ps, evaluator)", type));
  }
  Rendezvous job;
  job.source = "TF_CONFIG";
  job.rank = rank;
  job.world_size = int(tasks.size());
  std::tie(job.master_addr, job.master_port) = host_and_port(tasks[0], "the first task's address");
  // The tasks on this task's host share its cores.
  std::string host = host_and_port(tasks[size_t(rank)], "this task's address").first;
  job.local_world_size = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (host_and_port(tasks[i], "a task's address").first != host) continue;
    if (int(i) < rank) ++job.local_rank;
    ++job.local_world_size;
  }
  return job;
}

}  // namespace

Environment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::optional<Rendezvous> rendezvous_from(const Environment& env) {
  if (std::optional<Rendezvous> job = torchrun_job(env)) return job;
  if (std::optional<Rendezvous> job = tf_config_job(env)) return job;
  return slurm_job(env);
}

std::optional<std::pair<std::string, int>> host_and_port(const std::string& address) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  int port = 0;
  auto [end, error] =
      std::from_chars(address.data() + colon + 1, address.data() + address.size(), port);
  if (error != std::errc() || end != address.data() + address.size() || port < 1 || port > 65535)
    return std::nullopt;
  return std::make_pair(address.substr(0, colon), port);
}

std::string first_slurm_host(const std::string& node_list) {
  size_t end = node_list.find_first_of(",[");
  if (end == std::string::npos || node_list[end] == ',') return node_list.substr(0, end);
  // prefix[07-09,12]...: the prefix and the first number of the first range, its zeros kept.
  size_t digits = node_list.find_first_of(",-]", end + 1);
  if (digits == std::string::npos) return node_list.substr(0, end);
  return node_list.substr(0, end) + node_list.substr(end + 1, digits - end - 1);
}

}  // namespace kiln::distributed
