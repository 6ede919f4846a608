// conv2d: 2-D convolution over [channels, height, width] inputs.

#include "kiln/models/layers/convolution.h"

namespace kiln::models {
namespace {

class Conv2d : public Layer {
 public:
  explicit Conv2d(const ConvOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    ConvGeometry geometry = conv_geometry(input, o_, 2, "conv2d");
    auto module = torch::nn::Conv2d(torch::nn::Conv2dOptions(input[0], o_.out, o_.kernel)
                                        .stride(o_.stride)
                                        .padding(geometry.pad)
                                        .dilation(o_.dilation)
                                        .groups(o_.groups)
                                        .bias(o_.bias));
    return {torch::nn::AnyModule(module), geometry.output};
  }

 private:
  ConvOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "conv2d", Conv2d, ConvOptions,
              "2-D convolution over [channels, height, width] inputs.");

}  // namespace kiln::models
