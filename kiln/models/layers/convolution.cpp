#include "kiln/models/layers/convolution.h"

namespace kiln::models {

void ConvOptions::describe(Schema& s) {
  s.field("out", out, "Output channels.").min(1).require();
  s.field("kernel", kernel, "Kernel size (square in 2-D).").min(1);
  s.field("stride", stride, "Step between windows.").min(1);
  s.field("padding", padding, "same (keeps the size at stride 1), valid (none), or N zeros.");
  s.field("dilation", dilation, "Spacing between kernel taps.").min(1);
  s.field("groups", groups, "Channel groups; input and output channels must divide by it.").min(1);
  s.field("bias", bias, "Learn an additive bias per output channel.");
}

ConvGeometry conv_geometry(const Shape& input, const ConvOptions& o, size_t spatial,
                           const char* layer) {
  KILN_CHECK(input.size() == spatial + 1, "{} expects inputs {}, got {}", layer,
             spatial == 1 ? "[channels, length]" : "[channels, height, width]", shape_text(input));
  KILN_CHECK(input[0] % o.groups == 0 && o.out % o.groups == 0,
             "{} groups={} must divide the input channels ({}) and out ({})", layer, o.groups,
             input[0], o.out);
  KILN_CHECK(o.padding.mode != Padding::Mode::kSame || o.stride == 1,
             "{} padding: same needs stride 1, got stride {}", layer, o.stride);
  ConvGeometry geometry;
  geometry.pad = o.padding.resolve(o.dilation * (o.kernel - 1) + 1);
  geometry.output = {o.out};
  for (size_t d = 1; d < input.size(); ++d) {
    int64_t size = window_output(input[d], o.kernel, o.stride, geometry.pad, o.dilation);
    KILN_CHECK(size > 0, "{} kernel {} does not fit inputs {}", layer, o.kernel, shape_text(input));
    geometry.output.push_back(size);
  }
  return geometry;
}

}  // namespace kiln::models
