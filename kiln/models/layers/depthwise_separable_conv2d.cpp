// depthwise_separable_conv2d: a per-channel (depthwise) conv2d followed by a 1x1 (pointwise)
// conv2d that mixes channels, as in MobileNet and Keras's SeparableConv2D: far fewer weights
// than a full convolution of the same size.

#include "kiln/models/layers/convolution.h"

namespace kiln::models {
namespace {

struct SeparableConvOptions {
  int64_t out = 1;
  int64_t kernel = 3;
  int64_t stride = 1;
  Padding padding{Padding::Mode::kSame, 0};
  int64_t multiplier = 1;
  bool bias = true;
  void describe(Schema& s) {
    s.field("out", out, "Output channels of the pointwise convolution.").min(1).require();
    s.field("kernel", kernel, "Square kernel size of the depthwise convolution.").min(1);
    s.field("stride", stride, "Step of the depthwise convolution.").min(1);
    s.field("padding", padding, "same (keeps the size at stride 1), valid (none), or N zeros.");
    s.field("multiplier", multiplier, "Depthwise output channels per input channel.").min(1);
    s.field("bias", bias, "Learn a bias in the pointwise convolution (the depthwise has none).");
  }
};

// The two convolutions as one module, named as PyTorch users name them.
class SeparableImpl : public torch::nn::Module {
 public:
  SeparableImpl(torch::nn::Conv2d depthwise, torch::nn::Conv2d pointwise)
      : depthwise_(register_module("depthwise", std::move(depthwise))),
        pointwise_(register_module("pointwise", std::move(pointwise))) {}
  torch::Tensor forward(const torch::Tensor& x) { return call(pointwise_, call(depthwise_, x)); }

 private:
  torch::nn::Conv2d depthwise_, pointwise_;
};
TORCH_MODULE(Separable);

class DepthwiseSeparableConv2d : public Layer {
 public:
  explicit DepthwiseSeparableConv2d(const SeparableConvOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    KILN_CHECK(input.size() == 3,
               "depthwise_separable_conv2d expects inputs [channels, height, width], got {}",
               shape_text(input));
    ConvOptions depthwise;
    depthwise.out = input[0] * o_.multiplier;
    depthwise.kernel = o_.kernel;
    depthwise.stride = o_.stride;
    depthwise.padding = o_.padding;
    depthwise.groups = input[0];
    depthwise.bias = false;
    ConvGeometry geometry = conv_geometry(input, depthwise, 2, "depthwise_separable_conv2d");
    Separable both(
        torch::nn::Conv2d(torch::nn::Conv2dOptions(input[0], depthwise.out, o_.kernel)
                              .stride(o_.stride)
                              .padding(geometry.pad)
                              .groups(input[0])
                              .bias(false)),
        torch::nn::Conv2d(torch::nn::Conv2dOptions(depthwise.out, o_.out, 1).bias(o_.bias)));
    return {torch::nn::AnyModule(both), {o_.out, geometry.output[1], geometry.output[2]}};
  }

 private:
  SeparableConvOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "depthwise_separable_conv2d", DepthwiseSeparableConv2d,
              SeparableConvOptions,
              "A depthwise conv2d (one filter set per channel) then a 1x1 conv2d to `out`.");

}  // namespace kiln::models
