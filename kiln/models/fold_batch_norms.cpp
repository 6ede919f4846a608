#include "kiln/models/fold_batch_norms.h"

#include <iterator>

#include "kiln/models/stack_rewrite.h"

namespace kiln::models {
namespace {

// conv(x) * scale + shift, per output channel, written into the convolution itself: with
// scale = gamma / sqrt(running_var + eps) and shift = beta - running_mean * scale.
void fold(torch::nn::Conv2dImpl& conv, const torch::nn::BatchNorm2dImpl& norm) {
  torch::NoGradGuard no_grad;
  torch::Tensor scale = (norm.running_var + norm.options.eps()).rsqrt();
  if (norm.options.affine()) scale = scale * norm.weight;
  torch::Tensor shift = -norm.running_mean * scale;
  if (norm.options.affine()) shift = shift + norm.bias;
  conv.weight.mul_(scale.reshape({-1, 1, 1, 1}));
  if (conv.bias.defined())
    conv.bias.mul_(scale).add_(shift);
  else
    conv.bias = shift.clone();  // forward reads the member; no parameter need be registered
}

int fold_in(torch::nn::SequentialImpl& stack) {
  int folded = 0;
  for (auto it = stack.begin(); it != stack.end() && std::next(it) != stack.end(); ++it) {
    auto conv = std::dynamic_pointer_cast<torch::nn::Conv2dImpl>(it->ptr());
    auto norm = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(std::next(it)->ptr());
    // A batch norm without running statistics normalizes by each batch's: nothing to fold.
    if (!conv || !norm || !norm->options.track_running_stats()) continue;
    fold(*conv, *norm);
    *std::next(it) = torch::nn::AnyModule(torch::nn::Identity());
    ++folded;
  }
  return folded;
}

}  // namespace

int fold_batch_norms(torch::nn::Module& model) { return rewrite_stacks(model, fold_in); }

}  // namespace kiln::models
