// mobilenet_v2: MobileNetV2 (Sandler et al., 2018): inverted residual blocks (1x1 expansion,
// 3x3 depthwise, 1x1 linear projection) laid out and named as torchvision's (features.N.conv.M,
// classifier.1), so torchvision weights load by name. `width` scales every layer's channels;
// `small_input` keeps full resolution in the stem and the first strided stage (8x less
// downsampling in all), for 28-32 pixel images.

#include <cmath>

#include "kiln/models/model.h"
#include "kiln/models/networks/conv_parts.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::models {
namespace {

struct MobileNetV2Options {
  int64_t num_classes = 10;
  double width = 1.0;
  bool small_input = false;
  double dropout = 0.2;
  void describe(Schema& s) {
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
    s.field("width", width, "Width multiplier of every layer's channels.").min(0.05);
    s.field("small_input", small_input,
            "Stride 1 in the stem and the first strided stage, for small images.");
    s.field("dropout", dropout, "Dropout before the output layer.").in_range(0, 1);
  }
};

// Channels rounded to a multiple of 8, never dropping below 90% of `value` (torchvision's rule,
// so that widths, and parameter counts, agree).
int64_t divisible_by_8(double value) {
  int64_t rounded = std::max<int64_t>(8, int64_t(value + 4) / 8 * 8);
  return rounded < 0.9 * value ? rounded + 8 : rounded;
}

// Convolution, batchnorm, relu6 (a LayerStack: plain Sequentials cannot nest).
LayerStack conv_bn_relu6(int64_t in, int64_t out, int64_t kernel, int64_t stride = 1,
                         int64_t groups = 1) {
  return LayerStack(padded_conv(in, out, kernel, stride, false, groups), BatchNorm2d(out),
                    torch::nn::ReLU6());
}

class InvertedResidualImpl : public torch::nn::Module {
 public:
  InvertedResidualImpl(int64_t in, int64_t out, int64_t stride, int64_t expansion)
      : residual_(stride == 1 && in == out) {
    int64_t hidden = int64_t(std::round(double(in * expansion)));
    LayerStack conv;
    if (expansion != 1) conv->push_back(conv_bn_relu6(in, hidden, 1));
    conv->push_back(conv_bn_relu6(hidden, hidden, 3, stride, hidden));
    conv->push_back(padded_conv(hidden, out, 1));
    conv->push_back(BatchNorm2d(out));
    conv_ = register_module("conv", conv);
  }

  torch::Tensor forward(const torch::Tensor& x) {
    return residual_ ? x + call(conv_, x) : call(conv_, x);
  }

 private:
  bool residual_;
  LayerStack conv_{nullptr};
};
TORCH_MODULE(InvertedResidual);

struct Stage {
  int64_t expansion, channels, blocks, stride;
};

class MobileNetV2 : public Classifier {
 public:
  MobileNetV2(const MobileNetV2Options& o, const Shape& input) : Classifier(o.num_classes) {
    check_image_input(input, "mobilenet_v2");
    const std::vector<Stage> stages = {{1, 16, 1, 1}, {6, 24, 2, o.small_input ? 1 : 2},
                                       {6, 32, 3, 2}, {6, 64, 4, 2},
                                       {6, 96, 3, 1}, {6, 160, 3, 2},
                                       {6, 320, 1, 1}};
    int64_t channels = divisible_by_8(32 * o.width);
    features_->push_back(conv_bn_relu6(input[0], channels, 3, o.small_input ? 1 : 2));
    for (const Stage& stage : stages) {
      int64_t out = divisible_by_8(stage.channels * o.width);
      for (int64_t b = 0; b < stage.blocks; ++b) {
        features_->push_back(
            InvertedResidual(channels, out, b == 0 ? stage.stride : 1, stage.expansion));
        channels = out;
      }
    }
    int64_t last = divisible_by_8(1280 * std::max(1.0, o.width));
    features_->push_back(conv_bn_relu6(channels, last, 1));
    register_module("features", features_);
    classifier_ = register_module("classifier", LayerStack(torch::nn::Dropout(o.dropout),
                                                           torch::nn::Linear(last, o.num_classes)));
    init_like_torchvision(*this, 0.01);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    return call(classifier_, call(features_, input).mean({2, 3}));
  }

 private:
  LayerStack features_;
  LayerStack classifier_{nullptr};
};

}  // namespace

KILN_REGISTER(model_registry, "mobilenet_v2", MobileNetV2, MobileNetV2Options,
              "MobileNetV2 with a width multiplier, named as in torchvision.");

}  // namespace kiln::models
