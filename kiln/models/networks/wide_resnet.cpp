// wide_resnet: WRN-depth-k (Zagoruyko and Komodakis, 2016): a 3x3 stem of 16 channels, three
// stages of (depth-4)/6 pre-activation blocks 16k, 32k and 64k channels wide (each: batchnorm,
// relu, conv 3x3, batchnorm, relu, dropout, conv 3x3; a 1x1 shortcut where the width or stride
// changes), a final batchnorm and relu, global average pooling and the output layer.

#include <fmt/format.h>

#include "kiln/models/model.h"
#include "kiln/models/networks/conv_parts.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::models {
namespace {

struct WideResNetOptions {
  int64_t depth = 28;
  int64_t widen = 10;
  double dropout = 0.0;
  int64_t num_classes = 10;
  void describe(Schema& s) {
    s.field("depth", depth, "6n+4: 16, 22, 28, 40, ...; n blocks per stage.")
        .check([](int64_t d) { return d >= 10 && (d - 4) % 6 == 0; }, "6n+4 (16, 22, 28, 40)");
    s.field("widen", widen, "Widening factor k: stages are 16k, 32k, 64k channels.").min(1);
    s.field("dropout", dropout, "Dropout between the two convolutions of each block.")
        .in_range(0, 1);
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
  }
};

class WideBlockImpl : public torch::nn::Module {
 public:
  WideBlockImpl(int64_t in, int64_t out, int64_t stride, double dropout) : dropout_(dropout) {
    bn1_ = register_module("bn1", BatchNorm2d(in));
    conv1_ = register_module("conv1", padded_conv(in, out, 3, stride));
    bn2_ = register_module("bn2", BatchNorm2d(out));
    conv2_ = register_module("conv2", padded_conv(out, out, 3));
    if (in != out || stride != 1)
      shortcut_ = register_module("shortcut", padded_conv(in, out, 1, stride));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    torch::Tensor activated = torch::relu(call(bn1_, x));
    torch::Tensor y = torch::relu(call(bn2_, call(conv1_, activated)));
    if (dropout_ > 0) y = torch::dropout(y, dropout_, is_training());
    // Where the shape changes, the shortcut too starts from the normalised input.
    return call(conv2_, y) + (shortcut_ ? call(shortcut_, activated) : x);
  }

 private:
  double dropout_;
  BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, shortcut_{nullptr};
};
TORCH_MODULE(WideBlock);

class WideResNet : public Classifier {
 public:
  WideResNet(const WideResNetOptions& o, const Shape& input) : Classifier(o.num_classes) {
    check_image_input(input, "wide_resnet");
    conv1_ = register_module("conv1", padded_conv(input[0], 16, 3));
    int64_t channels = 16, blocks = (o.depth - 4) / 6;
    for (int64_t stage = 0; stage < 3; ++stage) {
      int64_t width = (16 << stage) * o.widen;
      LayerStack layer;
      for (int64_t b = 0; b < blocks; ++b) {
        layer->push_back(WideBlock(channels, width, b == 0 && stage > 0 ? 2 : 1, o.dropout));
        channels = width;
      }
      stages_.push_back(register_module(fmt::format("layer{}", stage + 1), layer));
    }
    bn_ = register_module("bn", BatchNorm2d(channels));
    fc_ = register_module("fc", torch::nn::Linear(channels, o.num_classes));
    init_like_torchvision(*this);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    torch::Tensor x = call(conv1_, input);
    for (auto& stage : stages_) x = call(stage, x);
    return call(fc_, torch::relu(call(bn_, x)).mean({2, 3}));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  std::vector<LayerStack> stages_;
  BatchNorm2d bn_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

KILN_REGISTER(model_registry, "wide_resnet", WideResNet, WideResNetOptions,
              "Wide residual network WRN-depth-k for small images.");

}  // namespace kiln::models
