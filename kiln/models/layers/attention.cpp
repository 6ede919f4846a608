#include "kiln/models/layers/attention.h"

#include <cmath>
#include <limits>

namespace kiln::models {

SelfAttentionImpl::SelfAttentionImpl(const SelfAttentionConfig& config) : config_(config) {
  int64_t dim = config.dim;
  in_proj_weight_ = register_parameter("in_proj_weight", torch::empty({3 * dim, dim}));
  torch::nn::init::xavier_uniform_(in_proj_weight_);
  if (config.bias) in_proj_bias_ = register_parameter("in_proj_bias", torch::zeros({3 * dim}));
  out_proj_ = register_module(
      "out_proj", torch::nn::Linear(torch::nn::LinearOptions(dim, dim).bias(config.bias)));
  if (config.bias) torch::nn::init::zeros_(out_proj_->bias);
}

int64_t SelfAttentionImpl::multiply_accumulates(const ModuleCall& call) const {
  int64_t steps = call.input[1], dim = config_.dim;
  return 3 * steps * dim * dim + 2 * steps * steps * dim;
}

torch::Tensor SelfAttentionImpl::forward(const torch::Tensor& x) {
  int64_t batch = x.size(0), steps = x.size(1), heads = config_.heads;
  int64_t head_dim = config_.dim / heads;
  // [batch, steps, 3 * dim] -> three [batch, heads, steps, head_dim]
  auto split_heads = [&](const torch::Tensor& t) {
    return t.reshape({batch, steps, heads, head_dim}).transpose(1, 2);
  };
  auto qkv = torch::nn::functional::linear(x, in_proj_weight_, in_proj_bias_).chunk(3, -1);
  torch::Tensor q = split_heads(qkv[0]) / std::sqrt(double(head_dim));
  torch::Tensor scores = torch::matmul(q, split_heads(qkv[1]).transpose(-2, -1));
  if (config_.causal) {
    auto future = torch::ones({steps, steps}, x.options().dtype(torch::kBool)).triu(1);
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  }
  torch::Tensor weights = torch::softmax(scores, -1);
  if (config_.dropout > 0) weights = torch::dropout(weights, config_.dropout, is_training());
  torch::Tensor joined =
      torch::matmul(weights, split_heads(qkv[2])).transpose(1, 2).reshape({batch, steps, -1});
  return call(out_proj_, joined);
}

}  // namespace kiln::models
