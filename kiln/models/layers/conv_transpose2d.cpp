// conv_transpose2d: the transpose (gradient) of a 2-D convolution, which enlarges its input:
// out = (in - 1) * stride - 2 * padding + (kernel - 1) + output_padding + 1. Decoders and
// generators use it to undo a strided conv2d.

#include "kiln/models/layer.h"

namespace kiln::models {
namespace {

struct ConvTranspose2dOptions {
  int64_t out = 1;
  int64_t kernel = 3;
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t output_padding = 0;
  bool bias = true;
  void describe(Schema& s) {
    s.field("out", out, "Output channels.").min(1).require();
    s.field("kernel", kernel, "Square kernel size.").min(1);
    s.field("stride", stride, "Upsampling step.").min(1);
    s.field("padding", padding, "Rows and columns removed from each side of the output.").min(0);
    s.field("output_padding", output_padding,
            "Extra rows and columns on one side, to reach an exact size (< stride).")
        .min(0);
    s.field("bias", bias, "Learn an additive bias per output channel.");
  }
};

class ConvTranspose2d : public Layer {
 public:
  explicit ConvTranspose2d(const ConvTranspose2dOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 3,
               "conv_transpose2d expects inputs [channels, height, width], got {}",
               shape_text(input));
    KILN_CHECK(o_.output_padding < o_.stride,
               "conv_transpose2d output_padding {} must be smaller than stride {}",
               o_.output_padding, o_.stride);
    Shape output = {o_.out, grown(input[1]), grown(input[2])};
    KILN_CHECK(output[1] > 0 && output[2] > 0,
               "conv_transpose2d padding {} leaves nothing of inputs {}", o_.padding,
               shape_text(input));
    auto options = torch::nn::ConvTranspose2dOptions(input[0], o_.out, o_.kernel)
                       .stride(o_.stride)
                       .padding(o_.padding)
                       .output_padding(o_.output_padding)
                       .bias(o_.bias);
    return {torch::nn::AnyModule(torch::nn::ConvTranspose2d(options)), output};
  }

 private:
  int64_t grown(int64_t size) const {
    return (size - 1) * o_.stride - 2 * o_.padding + (o_.kernel - 1) + o_.output_padding + 1;
  }

  ConvTranspose2dOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "conv_transpose2d", ConvTranspose2d, ConvTranspose2dOptions,
              "Transposed 2-D convolution (enlarges [C, H, W] inputs by its stride).");

}  // namespace kiln::models
