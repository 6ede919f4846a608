#pragma once
// Batch norm whose training batches can be normalized by the statistics of a whole data-parallel
// job's batch rather than each rank's share (`runtime.distributed.sync_batch_norm`), as PyTorch's
// SyncBatchNorm: every `batchnorm` layer is built as one of the modules here (torch's BatchNorm1d
// and 2d with the same parameters, buffers and names, so checkpoints and exports are unchanged),
// and synchronize_batch_norms() gives them the job's sum. In training, each rank then sums its
// examples' per-channel count, sum and sum of squares (in float64), the ranks add them up, and
// every rank normalizes by the job's mean and variance and updates its running statistics with
// them; backward adds up the gradients of those sums across the ranks too, so 2 ranks of batch B
// compute what one process of batch 2B does. In evaluation, or without a sum, they are torch's.
// Thread-safety: as torch's modules; the sum is a collective, called in the same order on every
// rank.

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <ostream>

// libtorch defines its batch norms' pretty_print() without exporting it, and a class derived
// from them needs it in its construction vtables: kiln defines these two (sync_batch_norm.cpp).
namespace torch::nn {
template <>
void BatchNormImplBase<1, BatchNorm1dImpl>::pretty_print(std::ostream& stream) const;
template <>
void BatchNormImplBase<2, BatchNorm2dImpl>::pretty_print(std::ostream& stream) const;
}  // namespace torch::nn

namespace kiln::models {

/// The element-wise sum of a float64 tensor over the ranks of a job, given on every rank.
using SumOverRanks = std::function<torch::Tensor(const torch::Tensor&)>;

/// Batch norm of `input` ([N, C, ...]) in training mode with the job's statistics.
torch::Tensor synchronized_batch_norm(const torch::Tensor& input,
                                      torch::nn::BatchNormOptions const& options,
                                      const torch::Tensor& weight, const torch::Tensor& bias,
                                      torch::Tensor& running_mean, torch::Tensor& running_var,
                                      torch::Tensor& batches_tracked, const SumOverRanks& sum);

template <class TorchBatchNorm>
class SyncableBatchNorm : public TorchBatchNorm {
 public:
  using TorchBatchNorm::TorchBatchNorm;
  torch::Tensor forward(const torch::Tensor& input) {
    if (!sum_ || !this->is_training()) return TorchBatchNorm::forward(input);
    return synchronized_batch_norm(input, this->options, this->weight, this->bias,
                                   this->running_mean, this->running_var, this->num_batches_tracked,
                                   *sum_);
  }
  /// From now on, training batches are normalized with `sum`'s statistics (null: this rank's).
  void synchronize(std::shared_ptr<const SumOverRanks> sum) { sum_ = std::move(sum); }

 private:
  std::shared_ptr<const SumOverRanks> sum_;
};

// Named as torch's, so that summaries call them BatchNorm1d and BatchNorm2d.
class BatchNorm1dImpl : public SyncableBatchNorm<torch::nn::BatchNorm1dImpl> {
 public:
  using SyncableBatchNorm::SyncableBatchNorm;
};
TORCH_MODULE(BatchNorm1d);

class BatchNorm2dImpl : public SyncableBatchNorm<torch::nn::BatchNorm2dImpl> {
 public:
  using SyncableBatchNorm::SyncableBatchNorm;
};
TORCH_MODULE(BatchNorm2d);

/// Gives every batch norm of `model` built by the `batchnorm` layer the job's `sum`; returns how
/// many.
int synchronize_batch_norms(torch::nn::Module& model, SumOverRanks sum);

}  // namespace kiln::models
