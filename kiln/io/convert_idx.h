#pragma once
// IDX (MNIST, Fashion-MNIST) to tf.Example records: one record per image, with the features
// TensorFlow's MNIST converter used: `image` (the raw uint8 pixels, row-major, channels last),
// `label` (int64), `height`, `width` and `channels` (int64).
// Thread-safety: pure functions.

#include <functional>
#include <string>

#include "kiln/io/idx.h"
#include "kiln/io/sharded_writer.h"

namespace kiln::io {

/// Called after each record with (records done, total).
using ConvertProgress = std::function<void(int64_t, int64_t)>;

/// The Example of image `index`; `labels` may be null (unlabelled images).
std::string idx_example(const IdxArray& images, const IdxArray* labels, int64_t index);

/// Converts an image file ([N, H, W] or [N, H, W, C] unsigned bytes) and an optional label file
/// ([N] integers) into `out`. Throws DataError naming the file for any other layout, or when
/// the counts differ.
void convert_idx(const std::string& images_path, const std::string& labels_path,
                 ShardedTfRecordWriter& out, const ConvertProgress& progress = {});

}  // namespace kiln::io
