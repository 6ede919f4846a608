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

torch::Tensor on_device_of(const torch::Tensor& host, const torch::Tensor& like) {
  if (like.is_cpu()) return host;
  return host.pin_memory().to(like.device(), /*non_blocking=*/true);
}

torch::Tensor crop_each(const torch::Tensor& batch, int64_t height, int64_t width,
                        const torch::Tensor& top, const torch::Tensor& left) {
  int64_t count = batch.size(0), channels = batch.size(1), full_width = batch.size(3);
  // Row r of example i's window is row top[i] + r of the image; likewise its columns.
  torch::Tensor rows = top.view({-1, 1}) + torch::arange(height, torch::kInt64);
  torch::Tensor columns = left.view({-1, 1}) + torch::arange(width, torch::kInt64);
  torch::Tensor indices = on_device_of(torch::cat({rows, columns}, 1), batch);
  torch::Tensor band = batch.gather(2, indices.narrow(1, 0, height)
                                           .view({count, 1, height, 1})
                                           .expand({count, channels, height, full_width}));
  return band.gather(3, indices.narrow(1, height, width)
                            .view({count, 1, 1, width})
                            .expand({count, channels, height, width}));
}

torch::Tensor pad_images(const torch::Tensor& batch, int64_t padding) {
  if (padding == 0) return batch;
  return torch::constant_pad_nd(batch, {padding, padding, padding, padding}, 0);
}

}  // namespace kiln::data
