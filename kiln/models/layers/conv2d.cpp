// conv2d: 2-D convolution over [channels, height, width] inputs.

#include "kiln/models/layers/convolution.h"

namespace kiln::models {
namespace {

class Conv2d : public Layer {
 public:
  explicit Conv2d(const ConvOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    return build_convolution<torch::nn::Conv2d, torch::nn::Conv2dOptions>(input, o_, 2, "conv2d");
  }

 private:
  ConvOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "conv2d", Conv2d, ConvOptions,
              "2-D convolution over [channels, height, width] inputs.");

}  // namespace kiln::models
