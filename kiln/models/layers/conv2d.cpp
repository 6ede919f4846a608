// conv2d: 2-D convolution over [channels, height, width] inputs.

#include "kiln/models/layer.h"
#include "kiln/models/layers/padding.h"

namespace kiln::models {
namespace {

struct Conv2dOptions {
  int64_t out = 1;
  int64_t kernel = 3;
  int64_t stride = 1;
  Padding padding{Padding::Mode::kSame, 0};
  int64_t dilation = 1;
  int64_t groups = 1;
  bool bias = true;
  void describe(Schema& s) {
    s.field("out", out, "Output channels.").min(1).require();
    s.field("kernel", kernel, "Square kernel size.").min(1);
    s.field("stride", stride, "Step between windows.").min(1);
    s.field("padding", padding, "same (keeps the size at stride 1), valid (none), or N zeros.");
    s.field("dilation", dilation, "Spacing between kernel taps.").min(1);
    s.field("groups", groups, "Channel groups; input and output channels must divide by it.")
        .min(1);
    s.field("bias", bias, "Learn an additive bias per output channel.");
  }
};

class Conv2d : public Layer {
 public:
  explicit Conv2d(const Conv2dOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 3, "conv2d expects inputs [channels, height, width], got {}",
               shape_text(input));
    KILN_CHECK(input[0] % o_.groups == 0 && o_.out % o_.groups == 0,
               "conv2d groups={} must divide the input channels ({}) and out ({})", o_.groups,
               input[0], o_.out);
    KILN_CHECK(o_.padding.mode != Padding::Mode::kSame || o_.stride == 1,
               "conv2d padding: same needs stride 1, got stride {}", o_.stride);
    int64_t pad = o_.padding.resolve(o_.dilation * (o_.kernel - 1) + 1);
    int64_t height = window_output(input[1], o_.kernel, o_.stride, pad, o_.dilation);
    int64_t width = window_output(input[2], o_.kernel, o_.stride, pad, o_.dilation);
    KILN_CHECK(height > 0 && width > 0, "conv2d kernel {} does not fit inputs {}", o_.kernel,
               shape_text(input));
    auto module = torch::nn::Conv2d(torch::nn::Conv2dOptions(input[0], o_.out, o_.kernel)
                                        .stride(o_.stride)
                                        .padding(pad)
                                        .dilation(o_.dilation)
                                        .groups(o_.groups)
                                        .bias(o_.bias));
    return {torch::nn::AnyModule(module), {o_.out, height, width}};
  }

 private:
  Conv2dOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "conv2d", Conv2d, Conv2dOptions,
              "2-D convolution over [channels, height, width] inputs.");

}  // namespace kiln::models
