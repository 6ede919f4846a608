#pragma once
// What maxpool and avgpool share: the window options and the output shape, 1-D for [C, L] inputs
// and 2-D for [C, H, W].

#include "kiln/models/layer.h"

namespace kiln::models {

struct PoolOptions {
  int64_t kernel = 2;
  int64_t stride = 0;
  int64_t padding = 0;
  void describe(Schema& s);
  /// The stride in effect: 0 means the window size.
  int64_t effective_stride() const { return stride == 0 ? kernel : stride; }
};

/// The shape after pooling `input` with `options`; throws naming `layer` when the input rank is
/// neither 2 nor 3, the padding exceeds half the window, or no window fits.
Shape pooled_shape(const Shape& input, const PoolOptions& options, const char* layer);

}  // namespace kiln::models
