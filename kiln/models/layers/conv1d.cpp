// conv1d: 1-D convolution over [channels, length] inputs (time series, signals, sequences).

#include "kiln/models/layers/convolution.h"

namespace kiln::models {
namespace {

class Conv1d : public Layer {
 public:
  explicit Conv1d(const ConvOptions& options) : o_(options) {}
  BuiltLayer build(const Shape& input) const override {
    return build_convolution<torch::nn::Conv1d, torch::nn::Conv1dOptions>(input, o_, 1, "conv1d");
  }

 private:
  ConvOptions o_;
};

}  // namespace

KILN_REGISTER(layer_registry, "conv1d", Conv1d, ConvOptions,
              "1-D convolution over [channels, length] inputs.");

}  // namespace kiln::models
