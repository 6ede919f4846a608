#include "kiln/losses/same_shape.h"

#include <fmt/ranges.h>

#include "kiln/core/error.h"

namespace kiln::losses {
namespace {

// `[32, 1]`: losses sit beside models, not on them, so they format shapes themselves.
std::string sizes_text(const torch::Tensor& tensor) {
  return fmt::format("[{}]", fmt::join(tensor.sizes(), ", "));
}

}  // namespace

torch::Tensor same_shape_target(const char* loss, const torch::Tensor& output,
                                const torch::Tensor& target) {
  torch::Tensor matched = target;
  if (output.dim() == 2 && output.size(1) == 1 && target.dim() == 1) matched = target.unsqueeze(1);
  KILN_CHECK(output.sizes() == matched.sizes(),
             "{} expects outputs and targets of the same shape, got outputs {} and targets {}",
             loss, sizes_text(output), sizes_text(target));
  return matched.to(output.dtype());
}

}  // namespace kiln::losses
