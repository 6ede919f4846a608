#pragma once
// What conv1d and conv2d share: their options, and the checks and arithmetic that turn an input
// shape into padding and an output shape.

#include "kiln/models/layer.h"
#include "kiln/models/layers/padding.h"

namespace kiln::models {

struct ConvOptions {
  int64_t out = 1;
  int64_t kernel = 3;
  int64_t stride = 1;
  Padding padding{Padding::Mode::kSame, 0};
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  void describe(Schema& s);
};

struct ConvGeometry {
  int64_t pad = 0;  // zeros on each side of every spatial dimension
  Shape output;
};

/// Checks `input` ([C] + `spatial` sizes) against the options and works out padding and output
/// shape; throws naming `layer` and the shape when they do not fit.
ConvGeometry conv_geometry(const Shape& input, const ConvOptions& options, size_t spatial,
                           const char* layer);

/// The torch convolution `Conv` (torch::nn::Conv1d or Conv2d, made from `TorchOptions`) for
/// `input`, and its output shape.
template <class Conv, class TorchOptions>
BuiltLayer build_convolution(const Shape& input, const ConvOptions& o, size_t spatial,
                             const char* layer) {
  ConvGeometry geometry = conv_geometry(input, o, spatial, layer);
  Conv module(TorchOptions(input[0], o.out, o.kernel)
                  .stride(o.stride)
                  .padding(geometry.pad)
                  .dilation(o.dilation)
                  .groups(o.groups)
                  .bias(o.bias));
  return {torch::nn::AnyModule(module), geometry.output};
}

}  // namespace kiln::models
