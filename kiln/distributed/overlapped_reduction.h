#pragma once
// Gradient averaging that runs while the backward pass is still running, as PyTorch's DDP
// Reducer does it: the trainable parameters are grouped into buckets in reverse order (the order
// backward computes their gradients; the first bucket small, so that communication starts
// early), a hook on each parameter's gradient accumulator copies its gradient into its bucket as
// soon as autograd has it, and a bucket's all-reduce starts once it is full and every bucket
// before it has started (the ranks must start them in the same order). After backward, finish()
// starts what is left (parameters that got no gradient this time), waits, and writes the means
// back into the gradients. Armed after backward instead, it starts every bucket in finish():
// the same exchange without the overlap. A parameter no rank has a gradient for keeps none (as
// on one process, where an optimizer passes it by); one that some rank has counts as zeros
// where it is missing. The last bucket also carries one flag of the caller's (the trainer's
// "my loss was not finite"), which therefore costs the ranks no meeting of its own; so that the
// flag can be set after backward, that bucket starts in finish(), when backward has reached the
// first layers and its overlap has nothing left to hide anyway.
// Thread-safety: arm() and finish() on the training thread; the hooks run on autograd's thread
// between them.

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <vector>

namespace c10d {
class Work;
}

namespace kiln::distributed {

class OverlappedReduction {
 public:
  /// Starts the all-reduce (sum) of one bucket.
  using Start = std::function<c10::intrusive_ptr<c10d::Work>(torch::Tensor& flat)>;
  /// Waits for one, throwing on failure or timeout.
  using Wait = std::function<void(const c10::intrusive_ptr<c10d::Work>& work)>;

  OverlappedReduction(int64_t first_bucket_bytes, int64_t bucket_bytes, Start start, Wait wait);
  ~OverlappedReduction();
  OverlappedReduction(const OverlappedReduction&) = delete;
  OverlappedReduction& operator=(const OverlappedReduction&) = delete;

  /// Before the backward pass whose gradients are to be averaged: the hooks watch `parameters`
  /// (installed again when they are not the ones of last time).
  void arm(const std::vector<torch::Tensor>& parameters);
  bool armed() const { return armed_; }
  /// After it: every parameter's gradient becomes its mean over `world_size` ranks (a parameter
  /// without a gradient gets one when another rank had one; none had: it keeps none). Returns
  /// whether `flag` was set on any rank.
  bool finish(int world_size, bool flag = false);
  /// Buckets and the parameters in each, in the order they start (for tests).
  std::vector<std::vector<size_t>> bucket_members() const;

 private:
  struct Bucket;
  void install(const std::vector<torch::Tensor>& parameters);
  void uninstall();
  void ready(size_t parameter);
  void start_ready_buckets();
  void copy_in(size_t parameter);

  int64_t first_bucket_bytes_, bucket_bytes_;
  Start start_;
  Wait wait_;
  std::vector<torch::Tensor> parameters_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;
  std::vector<Bucket> buckets_;
  std::vector<size_t> bucket_of_;    // by parameter
  std::vector<int64_t> offset_of_;   // by parameter: where in its bucket
  std::vector<size_t> position_of_;  // by parameter: which member of its bucket
  std::vector<bool> copied_;         // by parameter, this step
  size_t next_start_ = 0;
  bool armed_ = false;
};

}  // namespace kiln::distributed
