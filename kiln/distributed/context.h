#pragma once
// The processes of one training job, as the trainer sees them (docs/design.md §2, distributed/).
// Each process (rank) trains the same model on its own share of the data; they meet at three kinds
// of points, which this interface names so that data-parallel training (issue #20) plugs in without
// changing the loop:
// - gradients: after backward and before clipping, once per optimizer step, every rank's
//   gradients are replaced by their mean (reduce_gradients; begun during backward when the
//   trainer says so first, prepare_gradient_reduction);
// - decisions: anything that changes control flow (a NaN, a signal, a time limit, early stopping,
//   a goal reached, a rewind) is agreed on by all ranks, so that none waits at a meeting point
//   another rank will never reach (all_reduce with kMax: any rank's "yes" is everyone's);
// - statistics: losses and metrics are sums over examples, so ranks add theirs (kSum) or, for
//   metrics that keep examples, concatenate them (all_gather).
// A single process is the default context: every collective returns its own input unchanged, so
// training alone is bitwise what it was before this seam existed.
// Thread-safety: one context per training thread; collectives are called in the same order on
// every rank.

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::distributed {

enum class ReduceOp { kSum, kMax, kMin };

class Context {
 public:
  virtual ~Context() = default;
  /// This process's place in the job: 0 .. world_size() - 1. Rank 0 writes the run folder.
  virtual int rank() const { return 0; }
  virtual int world_size() const { return 1; }

  /// Before the backward pass whose gradients reduce_gradients() takes next (an optimizer step's
  /// last batch): a context may average each bucket of `parameters`' gradients while backward
  /// is still computing the others.
  virtual void prepare_gradient_reduction(const std::vector<torch::Tensor>& /*parameters*/) {}
  /// Replaces each parameter's gradient by its mean over the ranks (every rank passes the same
  /// parameters in the same order; a parameter without a gradient counts as zeros, and gets one
  /// when another rank had it), or, after prepare_gradient_reduction(), finishes doing so.
  /// Returns whether `flag` holds on any rank: sent with the gradients, so that the trainer's
  /// "this rank's loss was not finite" costs the ranks no meeting of its own.
  virtual bool reduce_gradients(const std::vector<torch::Tensor>& /*parameters*/, bool flag) {
    return flag;
  }
  /// Element-wise reduction of `values` over the ranks, in place.
  virtual void all_reduce(std::vector<double>& /*values*/, ReduceOp /*op*/) {}
  /// Every rank's `values`, by rank (their lengths may differ).
  virtual std::vector<std::vector<double>> all_gather(const std::vector<double>& values) {
    return {values};
  }
  /// Rank 0's `text` on every rank (the run folder's name, chosen once).
  virtual std::string broadcast(const std::string& text) { return text; }
  /// Rank 0's values of `tensors` on every rank, in place (the weights at the start, so that
  /// every rank trains the same model whatever its own initialization gave).
  virtual void broadcast_tensors(std::vector<torch::Tensor>& /*tensors*/) {}
};

/// The context of a process training alone.
std::shared_ptr<Context> single_process();

}  // namespace kiln::distributed
