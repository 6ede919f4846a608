#pragma once
// Multi-head self-attention over batch-first [batch, steps, dim] sequences (Vaswani et al., 2017),
// with torch.nn.MultiheadAttention's parameter names (in_proj_weight, in_proj_bias,
// out_proj.weight, out_proj.bias) and initialisation. Written here rather than wrapping
// torch::nn::MultiheadAttention, which in LibTorch 1.13 is sequence-first only and whose
// defaulted forward arguments do not fit an AnyModule.

#include <torch/torch.h>

#include "kiln/models/observe.h"

namespace kiln::models {

struct SelfAttentionConfig {
  int64_t dim = 0;
  int64_t heads = 1;
  double dropout = 0.0;  // on the attention weights, while training
  bool bias = true;
  bool causal = false;  // each step attends only to itself and earlier steps
};

class SelfAttentionImpl : public torch::nn::Module, public CountsMultiplyAccumulates {
 public:
  explicit SelfAttentionImpl(const SelfAttentionConfig& config);
  torch::Tensor forward(const torch::Tensor& x);
  /// The input projection and the two products over steps x steps; out_proj counts itself.
  int64_t multiply_accumulates(const ModuleCall& call) const override;

 private:
  SelfAttentionConfig config_;
  torch::Tensor in_proj_weight_, in_proj_bias_;
  torch::nn::Linear out_proj_{nullptr};
};
TORCH_MODULE(SelfAttention);

}  // namespace kiln::models
