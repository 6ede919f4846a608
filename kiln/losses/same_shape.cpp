#include "kiln/losses/same_shape.h"

#include "kiln/core/error.h"
#include "kiln/models/layer.h"

namespace kiln::losses {

torch::Tensor same_shape_target(const char* loss, const torch::Tensor& output,
                                const torch::Tensor& target) {
  torch::Tensor matched = target;
  if (output.dim() == 2 && output.size(1) == 1 && target.dim() == 1) matched = target.unsqueeze(1);
  KILN_CHECK(output.sizes() == matched.sizes(),
             "{} expects outputs and targets of the same shape, got outputs {} and targets {}",
             loss, models::shape_text(output.sizes().vec()),
             models::shape_text(target.sizes().vec()));
  return matched.to(output.dtype());
}

}  // namespace kiln::losses
