#pragma once
// Helpers the image augmentations share: rank checks with a message naming the transform, and
// per-example random draws and crops on [B, C, H, W] batches.
// Thread-safety: pure functions.

#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include <string>

namespace kiln::data {

/// Throws Error unless `batch` is [B, C, H, W], naming the transform and the shape it got.
void require_images(const torch::Tensor& batch, const std::string& transform);

/// `host`, drawn on the CPU, where `like` is: itself for a CPU batch; for a batch on a GPU, a
/// copy from pinned memory that the host does not wait for (a batch held on the device,
/// data.cache: device, is augmented there with the CPU's draws).
torch::Tensor on_device_of(const torch::Tensor& host, const torch::Tensor& like);

/// `count` integers drawn uniformly from [0, bound], as a CPU int64 tensor.
torch::Tensor random_offsets(int64_t count, int64_t bound, at::Generator& rng);

/// Example i of the result is the `height` x `width` window of `batch[i]` at (top[i], left[i])
/// (CPU int64 tensors): two gathers for the whole batch, on its device.
torch::Tensor crop_each(const torch::Tensor& batch, int64_t height, int64_t width,
                        const torch::Tensor& top, const torch::Tensor& left);

/// `batch` with `padding` zeros around height and width.
torch::Tensor pad_images(const torch::Tensor& batch, int64_t padding);

}  // namespace kiln::data
