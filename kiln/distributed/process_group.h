#pragma once
// The context of one rank of a real job: LibTorch's c10d carries every byte. Rank 0 hosts a
// TCPStore at MASTER_ADDR:MASTER_PORT where the ranks meet; a ProcessGroupGloo among them does
// the collectives (on CPU tensors; CUDA gradients go through host memory). Gradients are
// averaged in buckets of `bucket_bytes` (the first `first_bucket_bytes`), each bucket's
// all-reduce started as soon as backward has computed its gradients (overlapped_reduction.h).
// Thread-safety: as Context: one training thread per rank, collectives in the same order on
// every rank.

#include <chrono>
#include <memory>

#include "kiln/distributed/context.h"
#include "kiln/distributed/rendezvous.h"

namespace kiln::distributed {

struct ProcessGroupOptions {
  // How long a rank waits for the others, at the rendezvous and in each collective, before it
  // fails with a message: minutes, not the hours a stuck job would otherwise sit.
  std::chrono::milliseconds timeout = std::chrono::minutes(5);
  int64_t bucket_bytes = 25 << 20;
  // The network interface Gloo uses; "" takes GLOO_SOCKET_IFNAME, else the one that routes to
  // the master.
  std::string interface;
  // Small, as PyTorch DDP's, so that the first all-reduce starts early in the backward pass.
  int64_t first_bucket_bytes = 1 << 20;
  // false: every bucket is exchanged after backward (prepare_gradient_reduction does nothing).
  // The buckets are the same either way (OverlappedReduction's).
  bool overlap = true;
};

/// Joins the job `job` describes: returns once every rank has. A kiln::Error naming the master's
/// address when the rendezvous times out.
std::shared_ptr<Context> join_process_group(const Rendezvous& job,
                                            const ProcessGroupOptions& options);

}  // namespace kiln::distributed
