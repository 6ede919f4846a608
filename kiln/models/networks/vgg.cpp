// vgg: VGG-11/13/16/19 (Simonyan and Zisserman, 2015), optionally with batch normalisation, laid
// out and named as torchvision's (features.N, avgpool, classifier.N), so torchvision weights
// load by name. Five 2x2 poolings need images of at least 32x32.

#include <map>

#include "kiln/models/model.h"
#include "kiln/models/networks/conv_parts.h"
#include "kiln/models/sync_batch_norm.h"

namespace kiln::models {
namespace {

struct VggOptions {
  int64_t depth = 16;
  bool batchnorm = false;
  int64_t num_classes = 10;
  int64_t hidden = 4096;
  int64_t pool = 7;
  double dropout = 0.5;
  void describe(Schema& s) {
    s.field("depth", depth, "11, 13, 16 or 19 weight layers.")
        .check([](int64_t d) { return d == 11 || d == 13 || d == 16 || d == 19; },
               "of 11, 13, 16, 19");
    s.field("batchnorm", batchnorm, "Batch normalisation after each convolution.");
    s.field("num_classes", num_classes, "Classes to predict.").min(1);
    s.field("hidden", hidden, "Width of the two hidden classifier layers.").min(1);
    s.field("pool", pool, "The features are average-pooled to pool x pool before the classifier.")
        .min(1);
    s.field("dropout", dropout, "Dropout after each hidden classifier layer.").in_range(0, 1);
  }
};

// Channels of each 3x3 convolution, 0 for a 2x2 max pooling (the paper's configurations A, B, D,
// E).
const std::vector<int64_t>& configuration(int64_t depth) {
  static const std::map<int64_t, std::vector<int64_t>> configurations = {
      {11, {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
      {13, {64, 64, 0, 128, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0}},
      {16, {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0}},
      {19, {64,  64,  0,   128, 128, 0,   256, 256, 256, 256, 0,
            512, 512, 512, 512, 0,   512, 512, 512, 512, 0}}};
  return configurations.at(depth);
}

class Vgg : public Classifier {
 public:
  Vgg(const VggOptions& o, const Shape& input) : Classifier(o.num_classes) {
    check_image_input(input, "vgg");
    KILN_CHECK(input[1] >= 32 && input[2] >= 32,
               "vgg halves the image five times and needs at least 32x32, got {}; resize the "
               "images or choose resnet with small_input",
               shape_text(input));
    int64_t channels = input[0];
    for (int64_t width : configuration(o.depth)) {
      if (width == 0) {
        features_->push_back(torch::nn::MaxPool2d(2));
        continue;
      }
      features_->push_back(padded_conv(channels, width, 3, 1, /*bias=*/true));
      if (o.batchnorm) features_->push_back(BatchNorm2d(width));
      features_->push_back(torch::nn::ReLU());
      channels = width;
    }
    register_module("features", features_);
    avgpool_ = register_module("avgpool", torch::nn::AdaptiveAvgPool2d(o.pool));
    classifier_ = register_module(
        "classifier",
        LayerStack(torch::nn::Linear(channels * o.pool * o.pool, o.hidden), torch::nn::ReLU(),
                   torch::nn::Dropout(o.dropout), torch::nn::Linear(o.hidden, o.hidden),
                   torch::nn::ReLU(), torch::nn::Dropout(o.dropout),
                   torch::nn::Linear(o.hidden, o.num_classes)));
    init_like_torchvision(*this, 0.01);
  }

  torch::Tensor forward(const torch::Tensor& input) override {
    return call(classifier_, call(avgpool_, call(features_, input)).flatten(1));
  }

 private:
  LayerStack features_;
  torch::nn::AdaptiveAvgPool2d avgpool_{nullptr};
  LayerStack classifier_{nullptr};
};

}  // namespace

KILN_REGISTER(model_registry, "vgg", Vgg, VggOptions,
              "VGG-11/13/16/19, optionally with batchnorm, named as in torchvision.");

}  // namespace kiln::models
