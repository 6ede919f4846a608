#pragma once
// data.cache: device. Every example of a split gathered once, decoded and stacked, and held as
// tensors in the training device's memory (the GPU's on CUDA, host memory on the CPU); each
// batch is then gathered there by index, and the transforms run on it there, on whole batches.
// A dataset that fits in GPU memory never crosses the bus again after the first copy. The order,
// the augmentations' draws and so exact resume are the loader's, as without the cache.
// Thread-safety: gather() may run on several threads at once.

#include <memory>
#include <string>

#include "kiln/data/dataset.h"

namespace kiln::data {

/// `source`'s examples held on `device`. Throws a ConfigError at `config_path` when the source is
/// streamed from its files (no example can be gathered by index) or does not fit on the device.
std::shared_ptr<const Dataset> resident_on(std::shared_ptr<const Dataset> source,
                                           torch::Device device, const std::string& config_path,
                                           const std::string& split);

}  // namespace kiln::data
