// resnet: residual networks (He et al., 2016). ImageNet-style depths 18, 34, 50, 101, 152 with
// torchvision's module names (conv1, bn1, layer1..layer4 of blocks with conv1, bn1, ...,
// downsample, then fc), so torchvision weights load by name; `small_input` swaps the 7x7/2 stem
// and max pooling for one 3x3/1 convolution, for 28-32 pixel images. CIFAR-style depths 20, 32,
// 44, 56, 110 (6n+2) are the paper's three-stage networks of 16, 32 and 64 channels, with
// projection shortcuts.

#include <fmt/format.h>

#include <map>

#include "kiln/models/model.h"
#include "kiln/models/networks/conv_parts.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::models {
namespace {

bool is_imagenet_depth(int64_t depth) {
  return depth == 18 || depth == 34 || depth == 50 || depth == 101 || depth == 152;
}

struct ResNetOptions {
  int64_t depth = 18;
  int64_t num_classes = 10;
  bool small_input = false;
  int64_t width = 0;
  void describe(Schema& s) {
    s.field("depth", depth,
            "18, 34, 50, 101, 152 (ImageNet-style, four stages), or 6n+2 such as 20, 32, 44, 56, "
            "110 (CIFAR-style, three stages of n blocks).")
        .check([](int64_t d) { return is_imagenet_depth(d) || (d >= 8 && (d - 2) % 6 == 0); },
               "18, 34, 50, 101, 152, or 6n+2 (20, 32, 44, 56, 110, ...)");
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
    s.field("small_input", small_input,
            "ImageNet-style only: a 3x3 stride-1 stem without max pooling, for small images.");
    s.field("width", width, "Channels of the first stage; 0 for 64 (ImageNet) or 16 (CIFAR).")
        .min(0);
  }
};

// Two 3x3 convolutions (expansion 1), or 1x1, 3x3, 1x1 (expansion 4), plus the shortcut.
class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(int64_t in, int64_t planes, int64_t stride, bool bottleneck) : bottleneck_(bottleneck) {
    int64_t out = planes * (bottleneck ? 4 : 1);
    if (bottleneck) {
      conv1_ = register_module("conv1", padded_conv(in, planes, 1));
      bn1_ = register_module("bn1", BatchNorm2d(planes));
      conv2_ = register_module("conv2", padded_conv(planes, planes, 3, stride));
      bn2_ = register_module("bn2", BatchNorm2d(planes));
      conv3_ = register_module("conv3", padded_conv(planes, out, 1));
      bn3_ = register_module("bn3", BatchNorm2d(out));
    } else {
      conv1_ = register_module("conv1", padded_conv(in, planes, 3, stride));
      bn1_ = register_module("bn1", BatchNorm2d(planes));
      conv2_ = register_module("conv2", padded_conv(planes, planes, 3));
      bn2_ = register_module("bn2", BatchNorm2d(planes));
    }
    if (stride != 1 || in != out) {
      downsample_ = register_module("downsample",
                                    LayerStack(padded_conv(in, out, 1, stride), BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor y = torch::relu(call(bn1_, call(conv1_, x)));
    y = call(bn2_, call(conv2_, y));
    if (bottleneck_) y = call(bn3_, call(conv3_, torch::relu(y)));
    return torch::relu(y + (downsample_ ? call(downsample_, x) : x));
  }

 private:
  bool bottleneck_;
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  LayerStack downsample_{nullptr};
};
TORCH_MODULE(Block);

struct Family {
  std::vector<int64_t> blocks;  // per stage
  bool bottleneck;
  bool imagenet;
};

Family family(int64_t depth) {
  static const std::map<int64_t, Family> imagenet = {{18, {{2, 2, 2, 2}, false, true}},
                                                     {34, {{3, 4, 6, 3}, false, true}},
                                                     {50, {{3, 4, 6, 3}, true, true}},
                                                     {101, {{3, 4, 23, 3}, true, true}},
                                                     {152, {{3, 8, 36, 3}, true, true}}};
  if (imagenet.count(depth)) return imagenet.at(depth);
  int64_t n = (depth - 2) / 6;
  return {{n, n, n}, false, false};
}

class ResNet : public Classifier {
 public:
  ResNet(const ResNetOptions& o, const Shape& input) : Classifier(o.num_classes) {
    check_image_input(input, "resnet");
    Family f = family(o.depth);
    KILN_CHECK(f.imagenet || !o.small_input,
               "resnet small_input applies to ImageNet-style depths (18, 34, 50, 101, 152); "
               "depth {} already has a small-image stem",
               o.depth);
    int64_t width = o.width > 0 ? o.width : (f.imagenet ? 64 : 16);
    bool big_stem = f.imagenet && !o.small_input;
    conv1_ = register_module(
        "conv1", big_stem ? padded_conv(input[0], width, 7, 2) : padded_conv(input[0], width, 3));
    bn1_ = register_module("bn1", BatchNorm2d(width));
    max_pool_ = big_stem;
    int64_t channels = width;
    for (size_t stage = 0; stage < f.blocks.size(); ++stage) {
      int64_t planes = width << stage;
      LayerStack blocks;
      for (int64_t b = 0; b < f.blocks[stage]; ++b) {
        int64_t stride = b == 0 && stage > 0 ? 2 : 1;
        blocks->push_back(Block(channels, planes, stride, f.bottleneck));
        channels = planes * (f.bottleneck ? 4 : 1);
      }
      stages_.push_back(register_module(fmt::format("layer{}", stage + 1), blocks));
    }
    fc_ = register_module("fc", torch::nn::Linear(channels, o.num_classes));
    init_like_torchvision(*this);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = torch::relu(call(bn1_, call(conv1_, input)));
    if (max_pool_) x = torch::max_pool2d(x, 3, 2, 1);
    for (auto& stage : stages_) x = call(stage, x);
    return call(fc_, x.mean({2, 3}));
  }

 private:
  bool max_pool_ = false;
  torch::nn::Conv2d conv1_{nullptr};
  BatchNorm2d bn1_{nullptr};
  std::vector<LayerStack> stages_;
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

KILN_REGISTER(model_registry, "resnet", ResNet, ResNetOptions,
              "Residual network: ImageNet-style (18-152, torchvision names) or CIFAR-style "
              "(20-110).");

}  // namespace kiln::models
