#pragma once
// The start of a distributed job's run (issue #20, docs/distributed.md), in the order every rank
// takes it: join the other ranks (before anything is built or written, so a rank that cannot
// join fails alone and early); check that every rank trains the same thing (a rank whose config
// or training data differs from rank 0's fails the whole job, naming it); and give every rank
// rank 0's initial weights.
// Thread-safety: on the training thread; every rank calls each in the same order.

#include <memory>
#include <optional>
#include <string>

#include "kiln/distributed/context.h"
#include "kiln/distributed/rendezvous.h"
#include "kiln/experiment/experiment_config.h"

namespace kiln::experiment {

/// The context of the job `job` describes, joined with runtime.distributed's timeout and
/// buckets; the single process's when there is no job or it has one rank.
std::shared_ptr<distributed::Context> join_job(const std::optional<distributed::Rendezvous>& job,
                                               const ExperimentConfig& config);

/// Throws, on every rank, an Error naming the ranks whose resolved config or number of training
/// examples differs from rank 0's.
void check_same_job(distributed::Context& context, const std::string& config_yaml,
                    int64_t training_examples);

/// Rank 0's parameters and buffers of `model` on every rank.
void broadcast_weights(torch::nn::Module& model, distributed::Context& context);

/// Every batch norm of `model` normalizes its training batches by the statistics of the whole
/// job's batch (runtime.distributed.sync_batch_norm, models/sync_batch_norm.h); returns how many.
/// A single process computes them the same way, by its own statistics.
int synchronize_batch_norms(torch::nn::Module& model,
                            const std::shared_ptr<distributed::Context>& context);

}  // namespace kiln::experiment
