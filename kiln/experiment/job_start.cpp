#include "kiln/experiment/job_start.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <functional>

#include "kiln/core/error.h"
#include "kiln/distributed/process_group.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::experiment {

std::shared_ptr<distributed::Context> join_job(const std::optional<distributed::Rendezvous>& job,
                                               const ExperimentConfig& config) {
  if (!job || job->world_size == 1) return distributed::single_process();
  const engine::DistributedOptions& options = config.runtime.distributed;
  distributed::ProcessGroupOptions group;
  group.timeout = std::chrono::milliseconds(int64_t(options.timeout * 1000));
  group.bucket_bytes = std::max<int64_t>(1, int64_t(options.bucket_mb * (1 << 20)));
  group.overlap = options.overlap;
  return distributed::join_process_group(*job, group);
}

void check_same_job(distributed::Context& context, const std::string& config_yaml,
                    int64_t training_examples) {
  if (context.world_size() == 1) return;
  std::string mine = fmt::format("{:016x}", std::hash<std::string>{}(config_yaml));
  std::string first = context.broadcast(mine);
  std::vector<std::vector<double>> all =
      context.all_gather({first == mine ? 0.0 : 1.0, double(training_examples)});
  std::vector<int> other_config, other_data;
  for (size_t rank = 1; rank < all.size(); ++rank) {
    if (all[rank][0] != 0) other_config.push_back(int(rank));
    if (all[rank][1] != all[0][1]) other_data.push_back(int(rank));
  }
  if (!other_config.empty())
    throw Error(fmt::format(
        "rank(s) {} resolved another config than rank 0: every rank must train the same "
        "config (the same files, --set overrides and environment)",
        fmt::join(other_config, ", ")));
  if (!other_data.empty()) {
    std::vector<std::string> counts;
    for (int rank : other_data)
      counts.push_back(fmt::format("rank {}: {}", rank, all[size_t(rank)][1]));
    throw Error(fmt::format(
        "the ranks read different training data: rank 0 has {} examples, {}; every rank must "
        "see the same files",
        all[0][1], fmt::join(counts, ", ")));
  }
}

int synchronize_batch_norms(torch::nn::Module& model,
                            const std::shared_ptr<distributed::Context>& context) {
  // One process sums its own: it then computes as the ranks of a job do (float64 statistics), so
  // that a run's numbers do not depend on how many ranks ran it.
  if (context->world_size() == 1)
    return models::synchronize_batch_norms(model,
                                           [](const torch::Tensor& values) { return values; });
  return models::synchronize_batch_norms(model, [context](const torch::Tensor& values) {
    torch::Tensor host = values.detach().to(torch::kCPU, torch::kFloat64).contiguous();
    std::vector<double> numbers(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
    context->all_reduce(numbers, distributed::ReduceOp::kSum);
    return torch::tensor(numbers, torch::kFloat64).view(values.sizes()).to(values.device());
  });
}

void broadcast_weights(torch::nn::Module& model, distributed::Context& context) {
  if (context.world_size() == 1) return;
  std::vector<torch::Tensor> tensors = model.parameters();
  for (const torch::Tensor& buffer : model.buffers()) tensors.push_back(buffer);
  context.broadcast_tensors(tensors);
}

}  // namespace kiln::experiment
