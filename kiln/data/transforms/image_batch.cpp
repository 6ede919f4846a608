#include "kiln/data/transforms/image_batch.h"

#include <fmt/ranges.h>

#include "kiln/core/error.h"

namespace kiln::data {

void require_images(const torch::Tensor& batch, const std::string& transform) {
  KILN_CHECK(batch.dim() == 4, "{} works on image batches [B, C, H, W], got a batch of shape [{}]",
             transform, fmt::join(batch.sizes(), ", "));
}

torch::Tensor random_offsets(int64_t count, int64_t bound, at::Generator& rng) {
  return torch::randint(bound + 1, {count}, rng, torch::kInt64);
}

torch::Tensor crop_each(const torch::Tensor& batch, int64_t height, int64_t width,
                        const torch::Tensor& top, const torch::Tensor& left) {
  torch::Tensor out = torch::empty({batch.size(0), batch.size(1), height, width}, batch.options());
  auto tops = top.accessor<int64_t, 1>(), lefts = left.accessor<int64_t, 1>();
  for (int64_t i = 0; i < batch.size(0); ++i)
    out[i].copy_(batch[i].narrow(1, tops[i], height).narrow(2, lefts[i], width));
  return out;
}

torch::Tensor pad_images(const torch::Tensor& batch, int64_t padding) {
  if (padding == 0) return batch;
  return torch::constant_pad_nd(batch, {padding, padding, padding, padding}, 0);
}

}  // namespace kiln::data
