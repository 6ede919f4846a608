#pragma once
// How batches reach the device a run trains on (`runtime.pin_memory`, `runtime.channels_last`).
// On CUDA the loader's worker threads copy each batch from pinned host memory to the GPU on a side
// stream, so the copy overlaps the kernels of the steps before it and the training thread never
// waits on the host for it: when the loader hands the batch over, the training thread's stream
// is told to wait for the copy's event, and the GPU does the waiting. Channels-last stores images
// as NHWC, the layout cuDNN's fastest convolutions read.
// Thread-safety: the function device_feed() returns runs on any thread; a batch's `arrive`
// runs on the thread that uses the batch.

#include <functional>

#include "kiln/data/dataset.h"

namespace kiln::engine {

struct DeviceFeedOptions {
  bool pin_memory = true;      // CUDA: copy from page-locked memory, asynchronously
  bool channels_last = false;  // 4-D inputs as NHWC
};

/// What the loader applies to each batch on the thread that made it (data::LoaderOptions::deliver),
/// or an empty function where batches are best used as they are made (the CPU, channels first).
std::function<data::Batch(data::Batch)> device_feed(torch::Device device,
                                                    DeviceFeedOptions options);

/// A 4-D tensor (a batch of images) stored channels-last; any other as it is.
torch::Tensor as_channels_last(const torch::Tensor& tensor);

/// Stores `module`'s 4-D parameters and buffers (convolution kernels) channels-last, as a
/// channels-last input wants them.
void make_channels_last(torch::nn::Module& module);
/// Stores them contiguous again (channels first), undoing make_channels_last.
void make_channels_first(torch::nn::Module& module);

}  // namespace kiln::engine
